#!/usr/bin/env python3
"""`make lint`: the module rules of ARCHITECTURE.md §3, checked from the sources and from Package.swift.

    scripts/lint-modules.py [ROOT]        check ROOT (default: this checkout); exit 1 on a violation
    scripts/lint-modules.py --self-test   plant one violation per rule kind in copies of the tree
                                          and check each is reported (and the clean copy passes)

Reads every `Sources/<Module>/` folder: Swift imports (`import X`, `@testable import X`,
`import struct X.Y`, ...) outside comments and string literals, `#include`s of the C targets, the
files a system-library module holds, `print(`/`exit(` calls in library modules, file I/O in
PoiImaging and CCodecs. Then `swift package dump-package` (own scratch path, so a build running
in .build does not hold it up): every target's dependencies must be imports its rule allows, no
target may carry unsafeFlags (a package with them cannot be used as a dependency), and every
non-test target needs a rule. One line per violation:

    Sources/PoiStore/Foo.swift:3: PoiStore must not import PoiModel (ARCHITECTURE.md §3)

A new module gets its rule here and its row in ARCHITECTURE.md §3 in the same change.
"""
import glob, json, os, re, shutil, subprocess, sys, tempfile

SYSTEM = {"Foundation", "FoundationEssentials", "Dispatch", "Glibc", "Musl", "Darwin", "Synchronization"}
POI = {"PoiDigest", "PoiModel", "PoiFiles", "PoiFormats", "PoiImaging", "PoiStore", "PoiJobs", "PoiServer"}
C_MODULES = {"CJPEG", "CPNG", "CLCMS2", "CWebP", "CDeflate", "CMongoC", "CZlib", "COpenSSL", "CCodecs"}
# PoiFiles' API speaks swift-system's FilePath, so whoever may import PoiFiles may name it too.
FILES = {"PoiFiles", "SystemPackage"}
SERVER_PREFIXES = ("Hummingbird", "NIO")


class Rule:
    # headers (kind "c"): the #include <...> names the target may use, and how the message names them.
    def __init__(self, allowed=(), prefixes=(), forbidden=(), library=True, kind="swift", why="",
                 headers=(), headers_why=""):
        self.allowed, self.prefixes, self.forbidden = set(allowed), tuple(prefixes), set(forbidden)
        self.library, self.kind, self.why = library, kind, why
        self.headers, self.headers_why = set(headers), headers_why

    def allows(self, module):
        if module in self.forbidden:
            return False
        return module in self.allowed or module.startswith(self.prefixes)


THIRD_PARTY_ABOVE = {"Logging", "ServiceLifecycle"} | FILES
# ISO C headers, and the codec libraries' own; POSIX I/O (unistd.h, fcntl.h, ...) is "knowing about
# files" for CCodecs.
ISO_C_HEADERS = {"assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "setjmp.h",
                 "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h"}
CODEC_HEADERS = {"jpeglib.h", "jerror.h", "jconfig.h", "jmorecfg.h", "png.h", "pngconf.h", "pnglibconf.h", "lcms2.h",
                 "webp/encode.h", "webp/types.h", "libdeflate.h"}
RULES = {
    "CJPEG": Rule(kind="modulemap"), "CPNG": Rule(kind="modulemap"), "CMongoC": Rule(kind="modulemap"),
    # Little CMS 2: colour conversion, called from CCodecs' C only, like the codecs.
    "CLCMS2": Rule(kind="modulemap"),
    # zlib: gzip'd dumps, inflated and deflated streaming by PoiFormats.
    "CZlib": Rule(kind="modulemap"),
    # libwebp: WebP thumbnails, encoded by CCodecs' C only (never decoded).
    "CWebP": Rule(kind="modulemap"),
    # libdeflate: a PNG's image data inflated in one call, by CCodecs' C only.
    "CDeflate": Rule(kind="modulemap"),
    # OpenSSL's libcrypto (libmongoc links it already): digests, for PoiDigest only.
    "COpenSSL": Rule(kind="modulemap"),
    "CCodecs": Rule(allowed={"CJPEG", "CPNG", "CLCMS2", "CWebP", "CDeflate"}, kind="c",
                    headers=ISO_C_HEADERS | CODEC_HEADERS,
                    headers_why="only libjpeg, libpng, libwebp, Little CMS, libdeflate and ISO C headers"),
    # Typed wrappers of the C library calls Swift's Glibc module leaves out (mallopt,
    # sync_file_range): their own system headers and ISO C, nothing else; no dependencies.
    "CSystemShims": Rule(kind="c", headers=ISO_C_HEADERS | {"malloc.h", "fcntl.h"},
                         headers_why="only ISO C headers and those of the calls it wraps (malloc.h, fcntl.h)"),
    # SHA-256 and SHA-1 over libcrypto: bytes in, digests out.
    "PoiDigest": Rule(allowed=SYSTEM | {"COpenSSL"}),
    "PoiModel": Rule(allowed=SYSTEM | {"PoiDigest"}),
    "PoiFiles": Rule(allowed=SYSTEM | {"SystemPackage"}),
    # CSystemShims: sync_file_range for WritebackAhead (ByteSink.swift).
    "PoiFormats": Rule(allowed=SYSTEM | {"PoiModel", "CZlib", "CSystemShims"} | FILES),
    "PoiImaging": Rule(allowed=SYSTEM | {"CCodecs"}),
    "PoiStore": Rule(allowed=SYSTEM | {"CMongoC", "PoiDigest"} | FILES),
    "PoiJobs": Rule(allowed=SYSTEM | {"PoiModel", "PoiFormats", "PoiImaging", "PoiStore", "PoiDigest"} | FILES),
    # `poi serve`: Hummingbird/NIO and what their API speaks (HTTPTypes), multipart bodies, and
    # PoiDigest for the sha256 of an upload hashed as it streams; never ArgumentParser.
    "PoiServer": Rule(allowed=SYSTEM | {"Logging", "ServiceLifecycle", "HTTPTypes", "MultipartKit", "PoiDigest",
                                        "PoiStore", "PoiImaging", "PoiJobs", "PoiFormats", "PoiModel"} | FILES,
                      prefixes=SERVER_PREFIXES, forbidden={"ArgumentParser"}),
    # Shared by the test targets (Tests/PoiTestSupport): Swift Testing and the system only, so any
    # test target may use it without pulling a PoiKit layer it does not test.
    "PoiTestSupport": Rule(allowed=SYSTEM | {"Testing"}),
    # The CLI parses, prints and picks exit codes: no threads or pipelines of its own, no C
    # but CSystemShims' wrapper for the process's malloc policy, set first thing in main.
    "poi": Rule(allowed=(SYSTEM | POI | THIRD_PARTY_ABOVE | {"ArgumentParser", "CSystemShims"}),
                prefixes=SERVER_PREFIXES,
                forbidden={"Dispatch", "Synchronization"} | C_MODULES, library=False),
}
DOCS = {".md"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?"
                    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_]\w*)")
CALL = re.compile(r"(?<![\w.])(?:(?:Glibc|Darwin|Musl|Foundation|Swift)\.)?(print|debugPrint|exit)\s*\(")
SWIFT_FILE_IO = re.compile(r"(?<!\w)(open\s*\(|fopen\b|FileManager\b|FileHandle\b|Data\(contentsOf\b|"
                           r"String\(contentsOf(?:File)?\b)")
C_FILE_IO = re.compile(r"(?<!\w)(open\s*\(|fopen\b|freopen\b|jpeg_stdio_(?:src|dest)\b|png_init_io\b)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def strip_swift(text):
    """Blanks comments and string literals (keeping newlines, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i + hashes
            multi = text.startswith('"""', start)
            close = ('"""' if multi else '"') + "#" * hashes
            j = start + (3 if multi else 1)
            while j < n:
                if text[j] == "\\" and hashes == 0:
                    j += 2; continue
                if text.startswith(close, j):
                    j += len(close); break
                if text[j] == "\n" and not multi:
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        else:
            out.append(c); i += 1
    return "".join(out)


def strip_c(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def check_sources(root):
    problems = []
    src = os.path.join(root, "Sources")
    for module in sorted(os.listdir(src)):
        mdir = os.path.join(src, module)
        if not os.path.isdir(mdir):
            continue
        rule = RULES.get(module)
        if rule is None:
            problems.append(f"Sources/{module}: no rule for module {module}: add its row to ARCHITECTURE.md §3 and to "
                            f"scripts/lint-modules.py")
            continue
        for dirpath, _, files in os.walk(mdir):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                ext = os.path.splitext(name)[1]
                if ext in DOCS:
                    continue
                if rule.kind == "modulemap":
                    if os.path.relpath(path, mdir) not in ("module.modulemap", "shim.h"):
                        problems.append(f"{rel}: {module} holds only module.modulemap and shim.h, no code (ARCHITECTURE.md §3)")
                    continue
                if rule.kind == "c":
                    if ext not in (".c", ".h"):
                        problems.append(f"{rel}: {module} is C only (.c/.h) (ARCHITECTURE.md §3)")
                        continue
                    problems += check_c(rel, path, module, mdir, rule)
                    continue
                if ext != ".swift":
                    continue
                problems += check_swift(rel, path, module, rule)
    return problems


def check_c(rel, path, module, mdir, rule):
    problems = []
    raw = open(path, encoding="utf-8", errors="replace").read()
    local = {os.path.basename(p) for d, _, fs in os.walk(mdir) for p in fs}
    for no, line in enumerate(raw.splitlines(), 1):
        m = INCLUDE.match(line)
        if m and not (m.group(2) in rule.headers or (m.group(1) == '"' and os.path.basename(m.group(2)) in local)):
            problems.append(f"{rel}:{no}: {module} must not include <{m.group(2)}>: {rule.headers_why} "
                            f"(ARCHITECTURE.md §3)")
    for no, line in enumerate(strip_c(raw).splitlines(), 1):
        for m in C_FILE_IO.finditer(line):
            problems.append(f"{rel}:{no}: {module} must not know about files ({m.group(1).rstrip('( ')}) (ARCHITECTURE.md §3)")
    return problems


def check_swift(rel, path, module, rule):
    problems = []
    code = strip_swift(open(path, encoding="utf-8", errors="replace").read())
    for no, line in enumerate(code.splitlines(), 1):
        m = IMPORT.match(line)
        if m and not rule.allows(m.group(1)):
            problems.append(f"{rel}:{no}: {module} must not import {m.group(1)} (ARCHITECTURE.md §3)")
        if rule.library:
            for c in CALL.finditer(line):
                problems.append(f"{rel}:{no}: {module} is a library: no {c.group(1)}( calls; return or throw, "
                                f"the caller prints and exits (ARCHITECTURE.md §3)")
        if module == "PoiImaging":
            for f in SWIFT_FILE_IO.finditer(line):
                problems.append(f"{rel}:{no}: {module} must not do I/O beyond the bytes it is handed "
                                f"({f.group(1).rstrip('( ')}) (ARCHITECTURE.md §3)")
    return problems


def dependency_name(dep):
    for kind in ("byName", "target", "product"):
        if kind in dep:
            return dep[kind][0]
    return None


_manifests = {}


def check_manifest(root):
    # The self-test lints many copies of one Package.swift: evaluate each distinct manifest once.
    key = open(os.path.join(root, "Package.swift"), encoding="utf-8").read()
    if key not in _manifests:
        _manifests[key] = manifest_problems(root)
    return _manifests[key]


def manifest_problems(root):
    scratch = tempfile.mkdtemp(prefix="poi-lint-")
    try:
        r = subprocess.run([os.environ.get("SWIFT", "swift"), "package", "--package-path", root,
                            "--scratch-path", scratch, "dump-package"], capture_output=True, text=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        # SwiftPM locks the scratch path with a file of its own in the temporary folder, named
        # after that path (/tmp/poi-lint-x1 -> /tmp/_tmp_poi-lint-x1.lock): it goes too.
        for lock in glob.glob(os.path.join(tempfile.gettempdir(), "*" + os.path.basename(scratch) + "*.lock")):
            try:
                os.remove(lock)
            except OSError:
                pass
    if r.returncode != 0:
        return [f"Package.swift: swift package dump-package failed: {r.stderr.strip()[:400]}"]
    manifest = json.loads(r.stdout)
    problems = []
    for t in manifest["targets"]:
        name = t["name"]
        for s in t.get("settings", []):
            if "unsafeFlags" in s.get("kind", {}):
                flags = " ".join(s["kind"]["unsafeFlags"]["_0"])
                problems.append(f"Package.swift: target {name} has unsafeFlags ({flags}): a package with them "
                                f"cannot be a dependency; do it in code, or keep the flag in the "
                                f"Benchmarks/ or Fuzz/ package that needs it")
        if t["type"] == "test":
            continue
        rule = RULES.get(name)
        if rule is None:
            problems.append(f"Package.swift: target {name} has no ARCHITECTURE.md §3 rule (benchmarks and fuzzers live "
                            f"in their own packages, Benchmarks/ and Fuzz/)")
            continue
        if rule.kind == "modulemap":
            continue
        for dep in t.get("dependencies", []):
            d = dependency_name(dep)
            if d and not rule.allows(d):
                problems.append(f"Package.swift: target {name} must not depend on {d} (ARCHITECTURE.md §3)")
    return problems


def lint(root):
    return check_sources(root) + check_manifest(root)


# --- self-test -----------------------------------------------------------------------------------

def append(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def replace(root, rel, pattern, new):
    path = os.path.join(root, rel)
    text, n = re.subn(pattern, new, open(path, encoding="utf-8").read(), count=1)
    assert n == 1, f"self-test: {pattern!r} not in {rel}"
    open(path, "w", encoding="utf-8").write(text)


def first_swift(root, module):
    mdir = os.path.join(root, "Sources", module)
    for d, _, fs in sorted(os.walk(mdir)):
        for f in sorted(fs):
            if f.endswith(".swift"):
                return os.path.relpath(os.path.join(d, f), root)
    raise SystemExit(f"self-test: no Swift file in Sources/{module}")


PLANTS = [
    # (what, plant(root), the message that must appear)
    ("forbidden Swift import", lambda r: append(r, "Sources/PoiStore/LintPlant.swift", "import Foundation\nimport PoiModel\n"),
     "Sources/PoiStore/LintPlant.swift:2: PoiStore must not import PoiModel"),
    ("@testable import", lambda r: append(r, "Sources/PoiFormats/LintPlant.swift", "@testable import PoiStore\n"),
     "Sources/PoiFormats/LintPlant.swift:1: PoiFormats must not import PoiStore"),
    ("qualified import", lambda r: append(r, "Sources/PoiModel/LintPlant.swift", "import struct FoundationNetworking.URLRequest\n"),
     "Sources/PoiModel/LintPlant.swift:1: PoiModel must not import FoundationNetworking"),
    ("C module from a Swift library", lambda r: append(r, "Sources/PoiFormats/LintPlant.swift", "import CMongoC\n"),
     "PoiFormats must not import CMongoC"),
    ("CLI threads", lambda r: append(r, "Sources/poi/LintPlant.swift", "import Dispatch\n"),
     "Sources/poi/LintPlant.swift:1: poi must not import Dispatch"),
    ("CLI C module", lambda r: append(r, "Sources/poi/LintPlant.swift", "import CCodecs\n"),
     "poi must not import CCodecs"),
    ("print in a library", lambda r: append(r, "Sources/PoiJobs/LintPlant.swift", "func f() {\n    print(\"x\")\n}\n"),
     "Sources/PoiJobs/LintPlant.swift:2: PoiJobs is a library: no print( calls"),
    ("exit in a library", lambda r: append(r, "Sources/PoiStore/LintPlant.swift", "func f() { Glibc.exit(3) }\n"),
     "Sources/PoiStore/LintPlant.swift:1: PoiStore is a library: no exit( calls"),
    ("ArgumentParser in the server library", lambda r: append(r, "Sources/PoiServer/LintPlant.swift", "import Hummingbird\nimport ArgumentParser\n"),
     "Sources/PoiServer/LintPlant.swift:2: PoiServer must not import ArgumentParser"),
    ("print in the server library", lambda r: append(r, "Sources/PoiServer/LintPlant.swift", "func f() { print(\"listening\") }\n"),
     "Sources/PoiServer/LintPlant.swift:1: PoiServer is a library: no print( calls"),
    ("server dependency in Package.swift", lambda r: replace(r, "Package.swift", r'(\.target\(name: "PoiServer", dependencies: \[)',
                                                             r'\1.product(name: "ArgumentParser", package: "swift-argument-parser"), '),
     "Package.swift: target PoiServer must not depend on ArgumentParser"),
    ("file I/O in PoiImaging", lambda r: append(r, "Sources/PoiImaging/LintPlant.swift",
                                                "import Foundation\nlet e = FileManager.default.fileExists(atPath: \"/\")\n"),
     "Sources/PoiImaging/LintPlant.swift:2: PoiImaging must not do I/O beyond the bytes it is handed (FileManager)"),
    ("code in a module map module", lambda r: append(r, "Sources/CJPEG/extra.c", "int x;\n"),
     "Sources/CJPEG/extra.c: CJPEG holds only module.modulemap and shim.h"),
    ("non-C file in CCodecs", lambda r: append(r, "Sources/CCodecs/Helper.swift", "let x = 1\n"),
     "Sources/CCodecs/Helper.swift: CCodecs is C only"),
    ("foreign include in CCodecs", lambda r: append(r, "Sources/CCodecs/lint_plant.c", "#include <stdlib.h>\n#include <mongoc/mongoc.h>\n"),
     "Sources/CCodecs/lint_plant.c:2: CCodecs must not include <mongoc/mongoc.h>"),
    ("file I/O in CCodecs", lambda r: append(r, "Sources/CCodecs/lint_plant.c", "#include <stdio.h>\nvoid f(void) { fopen(\"x\", \"r\"); }\n"),
     "Sources/CCodecs/lint_plant.c:2: CCodecs must not know about files (fopen)"),
    ("foreign include in CSystemShims", lambda r: append(r, "Sources/CSystemShims/lint_plant.c", "#include <fcntl.h>\n#include <sys/socket.h>\n"),
     "Sources/CSystemShims/lint_plant.c:2: CSystemShims must not include <sys/socket.h>"),
    ("CSystemShims from a module not allowed it", lambda r: append(r, "Sources/PoiImaging/LintPlant.swift", "import CSystemShims\n"),
     "Sources/PoiImaging/LintPlant.swift:1: PoiImaging must not import CSystemShims"),
    ("module without a rule", lambda r: append(r, "Sources/PoiMystery/Mystery.swift", "let x = 1\n"),
     "Sources/PoiMystery: no rule for module PoiMystery"),
    ("Package.swift dependency", lambda r: replace(r, "Package.swift", r'(\.target\(name: "PoiImaging", dependencies: \[)',
                                                   r'\1"PoiModel", '),
     "Package.swift: target PoiImaging must not depend on PoiModel"),
    ("unsafeFlags in Package.swift", lambda r: replace(r, "Package.swift", r'(\.target\(name: "PoiImaging",[^)]*)\)',
                                                       r'\1, swiftSettings: [.unsafeFlags(["-Ounchecked"])])'),
     "Package.swift: target PoiImaging has unsafeFlags (-Ounchecked)"),
    ("bench executable in the root package", lambda r: replace(r, "Package.swift", r"\n(\s*)\.testTarget\(",
                                                               r'\n\1.executableTarget(name: "poi-bench-x", path: "Bench"),\n\1.testTarget('),
     "Package.swift: target poi-bench-x has no ARCHITECTURE.md §3 rule"),
]

# Things that look like violations but are not: must stay silent.
DECOYS = [
    ("Sources/PoiStore/LintDecoy.swift",
     '// import PoiModel, then print(x) and exit(1)\n/* import PoiJobs\n   print( */\n'
     'let s = "import PoiModel print(1) exit(2)"\nlet t = """\n    import PoiFormats\n    print(\n    """\n'
     'let r = #"a "quoted" print( "#\nfunc g(_ o: TextOutputStream) { _ = o; let exitCode = 1; _ = exitCode }\n'),
    ("Sources/PoiImaging/LintDecoy.swift", '// FileManager is not for this module\nlet reopen = 1\n'),
]


def self_test(root):
    ok = True
    base = tempfile.mkdtemp(prefix="poi-lint-selftest-")
    try:
        def copy(name):
            dst = os.path.join(base, name)
            shutil.copytree(os.path.join(root, "Sources"), os.path.join(dst, "Sources"))
            shutil.copy(os.path.join(root, "Package.swift"), dst)
            return dst

        # The checker is tested against the tree as it is: decoys must add nothing, each plant
        # must add its violation (the real check, not the self-test, judges today's tree).
        baseline = set(lint(copy("baseline")))
        clean = copy("clean")
        for rel, text in DECOYS:
            append(clean, rel, text)
        extra = [p for p in lint(clean) if p not in baseline]
        if extra:
            ok = False
            print("self-test: decoys in comments and strings were reported:")
            for p in extra:
                print("    " + p)
        else:
            print("self-test: decoys in comments and strings pass")
        for i, (what, plant, expected) in enumerate(PLANTS):
            tree = copy(f"plant{i}")
            plant(tree)
            hit = [p for p in lint(tree) if p not in baseline and expected in p]
            if hit:
                print(f"self-test: caught {what}: {hit[0]}")
            else:
                ok = False
                print(f"self-test: MISSED {what}: expected {expected!r}")
            shutil.rmtree(tree, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"self-test: {'passed' if ok else 'FAILED'} ({len(PLANTS)} planted violations)")
    return ok


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = [a for a in argv if not a.startswith("--")]
    if args:
        root = os.path.abspath(args[0])
    if "--self-test" in argv:
        return 0 if self_test(root) else 1
    problems = lint(root)
    for p in problems:
        print(p)
    if problems:
        print(f"lint: {len(problems)} module rule violation(s); the rules are ARCHITECTURE.md §3 "
              f"(ARCHITECTURE.md) and scripts/lint-modules.py")
        return 1
    print(f"lint: module rules of ARCHITECTURE.md §3 hold ({len(RULES)} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
