#!/usr/bin/env python3
"""Writes the PoiImaging test fixtures into OUTDIR, made by third-party encoders (Pillow; ImageMagick
for what Pillow cannot write: 16-bit colour, Adam7), plus each file's reference decode
(Pillow's, or the generated samples where Pillow itself reduces precision) and manifest.json.

Usage: make_fixtures.py OUTDIR
Reference files are raw, packed, row-major samples: 8-bit, or 16-bit little-endian."""
import io, json, os, random, struct, subprocess, sys, zlib
from array import array
from PIL import Image, ImageDraw

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(20261122)
manifest = {"decode": [], "orientation": [], "hostile": [], "resample": [], "samples": []}
CONVERT = "/usr/bin/convert-im6.q16"
W, H = 67, 45  # odd sizes exercise partial MCUs, edge taps and Adam7 pass edges

def path(name):
    return os.path.join(out, name)

def photo(mode="RGB", size=(W, H)):
    """Smooth gradients plus mild noise: photo-like content for lossy JPEG comparisons."""
    w, h = size
    r = Image.linear_gradient("L").resize(size)
    g = Image.radial_gradient("L").resize(size)
    b = Image.effect_noise(size, 24).point(lambda v: max(0, min(255, v)))
    im = Image.merge("RGB", (r, g, b))
    d = ImageDraw.Draw(im)
    d.rectangle([w // 5, h // 5, w // 2, h // 2], fill=(250, 30, 20))
    d.ellipse([w // 2, h // 3, w - 4, h - 3], fill=(20, 200, 60))
    return im.convert(mode) if mode != "RGB" else im

def noise(mode, size=(W, H)):
    """Random samples: any lossless round trip must reproduce them exactly."""
    bands = len(Image.new(mode, (1, 1)).getbands())
    return Image.frombytes(mode, size, rng.randbytes(size[0] * size[1] * bands))

def ref_bytes(im):
    if im.mode in ("I;16", "I"):
        return im.tobytes("raw", "I;16")
    return im.tobytes()

def add_decode(name, fmt, im_ref, channels, bit_depth, probe, compare, psnr=None, ref_raw=None):
    ref = ref_raw if ref_raw is not None else ref_bytes(im_ref)
    with open(path(name + ".ref"), "wb") as f:
        f.write(ref)
    manifest["decode"].append({
        "name": name, "file": name + "." + ("jpg" if fmt == "jpeg" else "png"), "format": fmt,
        "width": im_ref.size[0] if im_ref is not None else probe["width"],
        "height": im_ref.size[1] if im_ref is not None else probe["height"],
        "channels": channels, "bitDepth": bit_depth, "ref": name + ".ref",
        "compare": compare, "minPSNR": psnr, "probe": probe,
    })

def probe(w, h, channels, bits, alpha, progressive):
    return {"width": w, "height": h, "channels": channels, "bitDepth": bits, "hasAlpha": alpha,
            "progressive": progressive}

# ---------------- JPEG ----------------
JPEG_PSNR = 45.0  # measured: bit-identical to Pillow (max diff 0) with Debian libjpeg-turbo 2.1.5
def jpeg(name, im, **kw):
    im.save(path(name + ".jpg"), "JPEG", **kw)
    return Image.open(path(name + ".jpg"))

base = photo()
for name, kw in [("jpeg_baseline_420", dict(quality=90)),
                 ("jpeg_444", dict(quality=90, subsampling=0)),
                 ("jpeg_422", dict(quality=90, subsampling=1)),
                 ("jpeg_progressive", dict(quality=90, progressive=True)),
                 ("jpeg_optimized", dict(quality=75, optimize=True)),
                 ("jpeg_restart_markers", dict(quality=90, restart_marker_rows=1))]:
    dec = jpeg(name, base, **kw)
    add_decode(name, "jpeg", dec.convert("RGB"), 3, 8,
               probe(W, H, 3, 8, False, name == "jpeg_progressive"), "psnr", JPEG_PSNR)

dec = jpeg("jpeg_gray", base.convert("L"), quality=90)
add_decode("jpeg_gray", "jpeg", dec.convert("L"), 1, 8, probe(W, H, 1, 8, False, False), "psnr", JPEG_PSNR)
dec = jpeg("jpeg_gray_progressive", base.convert("L"), quality=90, progressive=True)
add_decode("jpeg_gray_progressive", "jpeg", dec.convert("L"), 1, 8, probe(W, H, 1, 8, False, True), "psnr", JPEG_PSNR)

# Pillow writes CMYK the Adobe way: samples inverted, flagged by an APP14 "Adobe" marker.
cmyk = base.convert("CMYK")
dec = jpeg("jpeg_cmyk_adobe", cmyk, quality=95)
add_decode("jpeg_cmyk_adobe", "jpeg", dec.convert("RGB"), 3, 8, probe(W, H, 4, 8, False, False), "psnr", JPEG_PSNR)

# Plain (non-inverted) CMYK: the same scan data without the APP14 marker means the stored
# samples are CMYK as-is, i.e. the inverse of what Pillow decoded from the Adobe file.
data = open(path("jpeg_cmyk_adobe.jpg"), "rb").read()
def strip_app14(b):
    i, outb = 2, bytearray(b[:2])
    while i < len(b):
        marker, seglen = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if marker == 0xDA:
            outb += b[i:]
            break
        if marker != 0xEE:
            outb += b[i:i + 2 + seglen]
        i += 2 + seglen
    return bytes(outb)
with open(path("jpeg_cmyk_plain.jpg"), "wb") as f:
    f.write(strip_app14(data))
plain_ref = Image.eval(dec, lambda v: 255 - v)  # dec is mode CMYK as Pillow understood it
add_decode("jpeg_cmyk_plain", "jpeg", plain_ref.convert("RGB"), 3, 8, probe(W, H, 4, 8, False, False), "psnr", JPEG_PSNR)
# YCCK: ImageMagick writes CMYK JPEGs as Adobe YCCK (APP14 transform 2); Pillow cannot.
base.save(path("tmp_base.png"))
subprocess.run([CONVERT, path("tmp_base.png"), "-colorspace", "CMYK", "-quality", "95",
                path("jpeg_ycck_adobe.jpg")], check=True)
os.remove(path("tmp_base.png"))
ycck = open(path("jpeg_ycck_adobe.jpg"), "rb").read()
assert ycck[ycck.index(b"\xff\xee") + 15] == 2, "expected an Adobe YCCK file"
dec = Image.open(path("jpeg_ycck_adobe.jpg"))
add_decode("jpeg_ycck_adobe", "jpeg", dec.convert("RGB"), 3, 8, probe(W, H, 4, 8, False, False), "psnr", JPEG_PSNR)
dec = jpeg("jpeg_cmyk_progressive", cmyk, quality=95, progressive=True)
add_decode("jpeg_cmyk_progressive", "jpeg", dec.convert("RGB"), 3, 8, probe(W, H, 4, 8, False, True), "psnr", JPEG_PSNR)

# ---------------- PNG ----------------
def png(name, im, **kw):
    im.save(path(name + ".png"), "PNG", **kw)
    return Image.open(path(name + ".png"))

def im_convert(name, args, input_png):
    subprocess.run([CONVERT, input_png] + args + [path(name + ".png")], check=True)
    return Image.open(path(name + ".png"))

dec = png("png_gray1", noise("L").point(lambda v: 255 if v > 127 else 0).convert("1"))
add_decode("png_gray1", "png", dec.convert("L"), 1, 8, probe(W, H, 1, 1, False, False), "exact")
for bits in (2, 4):
    levels = (1 << bits) - 1
    src = noise("L").point(lambda v, l=levels: round(round(v * l / 255) * 255 / l))
    dec = png(f"png_gray{bits}", src, bits=bits)
    assert dec.mode == "L", dec.mode
    add_decode(f"png_gray{bits}", "png", dec.convert("L"), 1, 8, probe(W, H, 1, bits, False, False), "exact")
dec = png("png_gray8", noise("L"))
add_decode("png_gray8", "png", dec, 1, 8, probe(W, H, 1, 8, False, False), "exact")
g16 = Image.frombytes("I;16", (W, H), rng.randbytes(W * H * 2))
dec = png("png_gray16", g16)
add_decode("png_gray16", "png", dec, 1, 16, probe(W, H, 1, 16, False, False), "exact")
dec = png("png_gray_alpha8", noise("LA"))
add_decode("png_gray_alpha8", "png", dec, 2, 8, probe(W, H, 2, 8, True, False), "exact")
dec = png("png_rgb8", noise("RGB"))
add_decode("png_rgb8", "png", dec, 3, 8, probe(W, H, 3, 8, False, False), "exact")
dec = png("png_rgba8", noise("RGBA"))
add_decode("png_rgba8", "png", dec, 4, 8, probe(W, H, 4, 8, True, False), "exact")

gt = noise("L").point(lambda v: v & 0xF0)
dec = png("png_gray_trns", gt, transparency=0x40)
add_decode("png_gray_trns", "png", dec.convert("LA"), 2, 8, probe(W, H, 2, 8, True, False), "exact")
rt = noise("RGB").point(lambda v: v & 0xC0)
dec = png("png_rgb_trns", rt, transparency=(0x40, 0x80, 0xC0))
add_decode("png_rgb_trns", "png", dec.convert("RGBA"), 4, 8, probe(W, H, 4, 8, True, False), "exact")

pal = noise("P")
pal.putpalette(bytes(rng.randbytes(768)))
dec = png("png_palette8", pal)
add_decode("png_palette8", "png", dec.convert("RGB"), 3, 8, probe(W, H, 3, 8, False, False), "exact")
pal4 = noise("L").point(lambda v: v % 16).convert("P")
pal4.putpalette(bytes(rng.randbytes(48)))
dec = png("png_palette4", pal4, bits=4)
add_decode("png_palette4", "png", dec.convert("RGB"), 3, 4, probe(W, H, 3, 4, False, False), "exact")
palt = noise("P")
palt.putpalette(bytes(rng.randbytes(768)))
alphas = bytes(rng.randbytes(256))
dec = png("png_palette_trns", palt, transparency=alphas)
add_decode("png_palette_trns", "png", dec.convert("RGBA"), 4, 8, probe(W, H, 4, 8, True, False), "exact")

# 16-bit colour: Pillow reads it as 8-bit, so the reference is the generated samples themselves.
def raw16(name, channels, interlace):
    be = rng.randbytes(W * H * channels * 2)
    kind, fmt = {3: ("rgb", "PNG48"), 4: ("rgba", "PNG64")}[channels]
    args = [CONVERT, "-size", f"{W}x{H}", "-depth", "16", "-endian", "MSB", f"{kind}:-"]
    if interlace:
        args += ["-interlace", "PNG"]
    subprocess.run(args + [f"{fmt}:" + path(name + ".png")], input=be, check=True)
    le = array("H", be)
    le.byteswap()  # big-endian generated samples -> little-endian reference
    return le.tobytes() if sys.byteorder == "little" else be

manifest_entry = lambda name, ch, inter: add_decode(name, "png", None, ch, 16,
                                                   probe(W, H, ch, 16, ch == 4, inter), "exact",
                                                   ref_raw=raw16(name, ch, inter))
manifest_entry("png_rgb16", 3, False)
manifest_entry("png_rgba16", 4, False)
manifest_entry("png_rgb16_interlaced", 3, True)
noise("RGBA").save(path("tmp_rgba.png"))
dec = im_convert("png_rgba8_interlaced", ["-interlace", "PNG", "-define", "png:format=png32"], path("tmp_rgba.png"))
add_decode("png_rgba8_interlaced", "png", dec.convert("RGBA"), 4, 8, probe(W, H, 4, 8, True, True), "exact")
noise("L").save(path("tmp_gray8.png"))
dec = im_convert("png_gray8_interlaced", ["-interlace", "PNG", "-define", "png:color-type=0",
                                          "-define", "png:bit-depth=8"], path("tmp_gray8.png"))
add_decode("png_gray8_interlaced", "png", dec.convert("L"), 1, 8, probe(W, H, 1, 8, False, True), "exact")
for f in ("tmp_rgba.png", "tmp_gray8.png"):
    os.remove(path(f))

# ---------------- orientation ----------------
# Upright 60x40 picture with a red block in its top-left corner; stored transformed by the
# inverse of what EXIF orientation o asks the viewer to do.
upright = Image.new("RGB", (60, 40), (30, 60, 200))
ImageDraw.Draw(upright).rectangle([0, 0, 11, 11], fill=(255, 0, 0))
T = Image.Transpose
inverse = {1: None, 2: T.FLIP_LEFT_RIGHT, 3: T.ROTATE_180, 4: T.FLIP_TOP_BOTTOM, 5: T.TRANSPOSE,
           6: T.ROTATE_90, 7: T.TRANSVERSE, 8: T.ROTATE_270}
for o in range(1, 9):
    stored = upright if inverse[o] is None else upright.transpose(inverse[o])
    exif = Image.Exif()
    exif[0x0112] = o
    name = f"orientation_{o}.jpg"
    stored.save(path(name), "JPEG", quality=95, exif=exif.tobytes())
    manifest["orientation"].append({"file": name, "orientation": o,
                                    "storedWidth": stored.size[0], "storedHeight": stored.size[1]})
    # PNG carries EXIF in an eXIf chunk (Pillow writes it before IDAT).
    stored.save(path(f"orientation_{o}.png"), "PNG", exif=exif.tobytes())

# ---------------- resampling ----------------
# A 640x480 photo-like picture and Pillow's Lanczos reduction of it to 160x120: PoiKit's
# thumbnail (box shrink-on-load or DCT scaling, then Lanczos3) must come out close to it.
big = photo(size=(640, 480))
big.save(path("resample_src.png"))
big.save(path("resample_src.jpg"), "JPEG", quality=95)
for name, src in [("resample_src.png", big), ("resample_src.jpg", Image.open(path("resample_src.jpg")).convert("RGB"))]:
    ref = src.resize((160, 120), Image.Resampling.LANCZOS)
    with open(path(name + ".ref"), "wb") as f:
        f.write(ref.tobytes())
    manifest["resample"].append({"file": name, "width": 160, "height": 120, "ref": name + ".ref"})

# ---------------- hostile ----------------
def hostile(name, data, kind):
    with open(path(name), "wb") as f:
        f.write(data)
    manifest["hostile"].append({"file": name, "kind": kind})

hostile("empty.jpg", b"", "empty")
hostile("random.bin", bytes([0x13]) + rng.randbytes(4095), "random")
hostile("wrong_magic.png", b"GIF89a" + rng.randbytes(200), "wrong_magic")
good_jpeg = open(path("jpeg_baseline_420.jpg"), "rb").read()
hostile("truncated.jpg", good_jpeg[: len(good_jpeg) // 2], "truncated_jpeg")
good_png = open(path("png_rgb8.png"), "rb").read()
hostile("truncated.png", good_png[: len(good_png) // 2], "truncated_png")
# A damaged IDAT checksum, and damaged IDAT data (zlib notices before the CRC is reached).
i = good_png.index(b"IDAT")
idat_len = struct.unpack(">I", good_png[i - 4:i])[0]
crc_at = i + 4 + idat_len
hostile("bad_crc.png", good_png[:crc_at] + bytes([good_png[crc_at] ^ 0xFF]) + good_png[crc_at + 1:], "bad_crc_png")
hostile("corrupt_idat.png", good_png[:i + 10] + bytes([good_png[i + 10] ^ 0xFF]) + good_png[i + 11:], "corrupt_idat_png")
# SOI, then a frame header declaring height 0: libjpeg's own fatal error.
hostile("jpeg_bad_sof.jpg", bytes.fromhex("FFD8FFC0000B08000000100101110000") + bytes(32), "bad_sof_jpeg")
# SOI followed by zeros: no marker ever comes, so libjpeg hits the end of the data.
hostile("jpeg_garbage_header.jpg", b"\xFF\xD8\xFF" + bytes(61), "garbage_jpeg")
def chunk(kind, payload):
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
# 30000x30000 8-bit gray: only the first rows of (all-zero) data are present; the header alone
# must get it rejected, so the file stays a few KB.
rows = zlib.compress(b"\x00" * (30001 * 64), 9)
bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)) \
    + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
hostile("bomb_30000.png", bomb, "bomb_png")
# A valid small JPEG whose SOF declares 64250x64250.
def patch_sof(b, w, h):
    b = bytearray(b)
    for marker in (0xC0, 0xC2):
        j = b.find(bytes([0xFF, marker]))
        if j > 0:
            b[j + 5:j + 9] = struct.pack(">HH", h, w)
            return bytes(b)
    raise SystemExit("no SOF")
hostile("bomb_64250.jpg", patch_sof(good_jpeg, 64250, 64250), "bomb_jpeg")
hostile("bomb_64250_progressive.jpg", patch_sof(open(path("jpeg_progressive.jpg"), "rb").read(), 64250, 64250),
        "bomb_jpeg")

# ---------------- real photos ----------------
# Samples/images/ (the repo's public-domain/CC0 photos): Pillow's decode of each, in PoiKit's
# channel layout, or the error Pillow raised (then PoiKit must reject the file too).
samples_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Samples", "images")
for name in sorted(os.listdir(samples_dir)) if os.path.isdir(samples_dir) else []:
    full = os.path.normpath(os.path.join(samples_dir, name))
    if not name.lower().endswith((".jpg", ".jpeg", ".png")):
        continue
    entry = {"file": full}
    try:
        im = Image.open(full)
        im.load()
    except Exception as e:  # noqa: BLE001 - any refusal counts
        entry["pillowError"] = str(e)
        manifest["samples"].append(entry)
        continue
    entry["orientation"] = int(im.getexif().get(0x0112, 1))
    has_trns = "transparency" in im.info
    if im.mode in ("I;16", "I"):
        ref, channels, bits = im.tobytes("raw", "I;16"), 1, 16
    else:
        target = {"1": "L", "L": "LA" if has_trns else "L", "LA": "LA", "P": "RGBA" if has_trns else "RGB",
                  "PA": "RGBA", "RGB": "RGBA" if has_trns else "RGB", "RGBA": "RGBA", "CMYK": "RGB",
                  "YCbCr": "RGB"}.get(im.mode)
        if target is None or im.format == "PNG" and im.info.get("bitdepth", 8) == 16:
            continue  # Pillow reads 16-bit colour as 8-bit: no exact reference
        ref, channels, bits = im.convert(target).tobytes(), len(target), 8
    refname = "sample_" + name + ".ref"
    with open(path(refname), "wb") as f:
        f.write(ref)
    entry.update({"format": "jpeg" if im.format == "JPEG" else "png", "width": im.size[0], "height": im.size[1],
                  "channels": channels, "bitDepth": bits, "ref": refname})
    manifest["samples"].append(entry)

# ---------------- deflate streams libdeflate takes and zlib refuses ----------------
# CRCs right, one RFC 1951 rule broken: a fixed-Huffman block using literal/length symbol 286.
# zlib (the streaming path) says "invalid literal/length code"; libdeflate (the whole-inflate
# path) reads it as a length of 258. Kept in lenient/, out of the top-level lists.
os.makedirs(path("lenient"), exist_ok=True)
class BitWriter:
    def __init__(self): self.bits = []
    def put(self, value, n):      # extra bits and header fields: least significant first
        self.bits += [(value >> i) & 1 for i in range(n)]
    def code(self, value, n):     # Huffman codewords: most significant first
        self.bits += [(value >> i) & 1 for i in range(n - 1, -1, -1)]
    def bytes(self):
        b = self.bits + [0] * (-len(self.bits) % 8)
        return bytes(sum(b[i + j] << j for j in range(8)) for i in range(0, len(b), 8))
def fixed_literal(bw, v):
    if v < 144: bw.code(0x30 + v, 8)
    elif v < 256: bw.code(0x190 + v - 144, 9)
    elif v < 280: bw.code(v - 256, 7)
    else: bw.code(0xC0 + v - 280, 8)
lw, lh = 255, 200
lraw = b"\x00" * (lh * (lw + 1))
bw = BitWriter()
bw.put(1, 1); bw.put(1, 2)                     # final block, fixed Huffman
for _ in range(100): fixed_literal(bw, 0)
fixed_literal(bw, 286); bw.code(0, 5)          # length "286" (258 to libdeflate), distance 1
for _ in range(len(lraw) - 100 - 258): fixed_literal(bw, 0)
fixed_literal(bw, 256)
lstream = b"\x78\x01" + bw.bytes() + struct.pack(">I", zlib.adler32(lraw) & 0xFFFFFFFF)
with open(path("lenient/litlen286.png"), "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", lw, lh, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", lstream) + chunk(b"IEND", b""))

with open(path("manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
print(f"wrote {len(manifest['decode'])} decode, {len(manifest['orientation'])} orientation, "
      f"{len(manifest['hostile'])} hostile fixtures to {out}")
