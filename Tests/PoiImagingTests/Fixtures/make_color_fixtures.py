"""Colour fixtures for ColorManagementTests, made at test time from a sample photo with Pillow's
ImageCms (Little CMS 2 inside Pillow: an implementation independent of PoiKit's C code).

    make_color_fixtures.py OUT_DIR [DISPLAY_P3_ICC]

For each case: the tagged file, and the colour-managed reference (Pillow's conversion of the same
decoded pixels to sRGB, perceptual intent) as raw 8-bit samples, full size. Profiles from Debian's
icc-profiles-free (RGB, gray) and libgs-common (CMYK), installed by `make setup`; the YCCK file is
written by ImageMagick (convert-im6.q16). Also damaged-profile variants.
"""
import io, json, os, struct, subprocess, sys
from PIL import Image, ImageChops, ImageCms, ImageStat

OUT = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ICC = "/usr/share/color/icc"
os.makedirs(OUT, exist_ok=True)
srgb = ImageCms.createProfile("sRGB")
CONVERT = "/usr/bin/convert-im6.q16"  # by path: another `convert` may come first on PATH
adobe_path = os.path.join(ICC, "compatibleWithAdobeRGB1998.icc")
gray_path = os.path.join(ICC, "Gray.icc")
manifest = {}

photo = Image.open(os.path.join(ROOT, "Samples/images/coffee.jpg")).convert("RGB")
photo.thumbnail((480, 480))


def with_app2(jpeg, chunks):
    """JPEG bytes with the given APP2 payloads inserted after SOI (any existing ones kept)."""
    segs = b"".join(b"\xff\xe2" + struct.pack(">H", len(c) + 2) + c for c in chunks)
    return jpeg[:2] + segs + jpeg[2:]


def icc_chunks(profile, size=65519):
    """APP2 ICC_PROFILE payloads of a profile, as many as its size needs (ICC.1 B.4)."""
    parts = [profile[i:i + size] for i in range(0, len(profile), size)]
    return [b"ICC_PROFILE\0" + bytes([n + 1, len(parts)]) + p for n, p in enumerate(parts)]


def segments(jpeg):
    """(marker, start, end) of each marker segment between SOI and the first SOS."""
    i = 2
    while i + 4 <= len(jpeg) and jpeg[i + 1] != 0xDA:
        end = i + 2 + struct.unpack(">H", jpeg[i + 2:i + 4])[0]
        yield jpeg[i + 1], i, end
        i = end


def without(jpeg, marker):
    return jpeg[:2] + b"".join(jpeg[s:e] for m, s, e in segments(jpeg) if m != marker) + jpeg[max(e for _, _, e in segments(jpeg)):]


def strip_app14(jpeg):
    return without(jpeg, 0xEE)


def strip_app2(jpeg):
    return without(jpeg, 0xE2)


def app14_transform(jpeg):
    """The Adobe marker's transform flag (0 CMYK, 1 YCbCr, 2 YCCK), None without the marker."""
    for m, s, e in segments(jpeg):
        if m == 0xEE and jpeg[s + 4:s + 9] == b"Adobe":
            return jpeg[s + 15]
    return None


def reference(tagged_bytes, profile_bytes, mode_out):
    """Pillow decodes the tagged file and converts it to sRGB (or sRGB's gray for 'L')."""
    im = Image.open(io.BytesIO(tagged_bytes))
    im.load()
    src = ImageCms.ImageCmsProfile(io.BytesIO(profile_bytes))
    if im.mode == "L":
        # sRGB as RGB; for gray the three channels are equal, and R is what PoiKit's gray gives.
        rgb = ImageCms.profileToProfile(im, src, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
        return rgb.split()[0].tobytes()
    mode = "RGB" if im.mode == "RGB" else im.mode
    out = ImageCms.profileToProfile(im.convert(mode), src, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode=mode)
    return out.tobytes()


def save(name, image, fmt, profile_bytes=None, **kw):
    buf = io.BytesIO()
    if profile_bytes is not None:
        kw["icc_profile"] = profile_bytes
    image.save(buf, fmt, **kw)
    data = buf.getvalue()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    return data


adobe = open(adobe_path, "rb").read()
gray = open(gray_path, "rb").read()
# The photo's sRGB pixels expressed in Adobe RGB: what a camera set to Adobe RGB writes.
in_adobe = ImageCms.profileToProfile(photo, srgb, ImageCms.ImageCmsProfile(io.BytesIO(adobe)),
                                     renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
for name, fmt, kw in [("adobe.jpg", "JPEG", {"quality": 95}), ("adobe.png", "PNG", {})]:
    data = save(name, in_adobe, fmt, adobe, **kw)
    with open(os.path.join(OUT, name + ".srgb"), "wb") as f:
        f.write(reference(data, adobe, "RGB"))
    manifest[name] = {"width": in_adobe.width, "height": in_adobe.height, "channels": 3}

# RGBA PNG: alpha must come through unchanged.
rgba = in_adobe.convert("RGBA")
rgba.putalpha(Image.linear_gradient("L").resize(rgba.size))
data = save("adobe-alpha.png", rgba, "PNG", adobe)
with open(os.path.join(OUT, "adobe-alpha.png.srgb"), "wb") as f:
    f.write(reference(data, adobe, "RGBA"))
manifest["adobe-alpha.png"] = {"width": rgba.width, "height": rgba.height, "channels": 4}

# Display P3 (the profile is built by the Swift test with Little CMS: Pillow cannot make one).
if len(sys.argv) > 2:
    p3 = open(sys.argv[2], "rb").read()
    in_p3 = ImageCms.profileToProfile(photo, srgb, ImageCms.ImageCmsProfile(io.BytesIO(p3)),
                                      renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    data = save("p3.jpg", in_p3, "JPEG", p3, quality=95)
    with open(os.path.join(OUT, "p3.jpg.srgb"), "wb") as f:
        f.write(reference(data, p3, "RGB"))
    manifest["p3.jpg"] = {"width": in_p3.width, "height": in_p3.height, "channels": 3}

# Gray with a gray profile (a gamma 1.0 curve, far from sRGB's).
gray_photo = photo.convert("L")
for name, fmt, kw in [("gray.jpg", "JPEG", {"quality": 95}), ("gray.png", "PNG", {})]:
    data = save(name, gray_photo, fmt, gray, **kw)
    with open(os.path.join(OUT, name + ".srgb"), "wb") as f:
        f.write(reference(data, gray, "L"))
    manifest[name] = {"width": gray_photo.width, "height": gray_photo.height, "channels": 1}

# A real photo of the samples, tagged Adobe RGB (1998) by its camera software.
rocket = open(os.path.join(ROOT, "Samples/images/rocket.jpg"), "rb").read()
with open(os.path.join(OUT, "rocket.jpg"), "wb") as f:
    f.write(rocket)
with open(os.path.join(OUT, "rocket.jpg.srgb"), "wb") as f:
    f.write(reference(rocket, Image.open(io.BytesIO(rocket)).info["icc_profile"], "RGB"))

# CMYK with an embedded press profile (Artifex's SWOP profile from Debian's libgs-common:
# icc-profiles-free has no CMYK profile). Three encodings of the same ink:
# - cmyk-ycck.jpg: ImageMagick's conversion (-profile sRGB -profile CMYK), what Photoshop and
#   ImageMagick write: Adobe APP14 transform 2 (YCCK), samples inverted, profile in 3 APP2 chunks;
# - cmyk-adobe.jpg: Pillow's, APP14 transform 0 (CMYK), samples inverted;
# - cmyk-plain.jpg: no APP14, samples are ink as-is.
# Pillow decodes every CMYK JPEG as Adobe-inverted ("CMYK;I", marker or not), so the reference
# for the plain file inverts Pillow's decode back. Each reference is checked against the photo
# it came from (a wrong polarity is ~100 levels off, see below).
cmyk_path = "/usr/share/color/icc/ghostscript/default_cmyk.icc"
srgb_path = "/usr/share/color/icc/ghostscript/srgb.icc"
cmyk_icc = open(cmyk_path, "rb").read()
cmyk_profile = ImageCms.ImageCmsProfile(io.BytesIO(cmyk_icc))
photo.save(os.path.join(OUT, "photo.png"))
subprocess.run([CONVERT, os.path.join(OUT, "photo.png"), "-profile", srgb_path, "-profile", cmyk_path,
                "-quality", "95", os.path.join(OUT, "cmyk-ycck.jpg")], check=True)
os.remove(os.path.join(OUT, "photo.png"))
ycck = open(os.path.join(OUT, "cmyk-ycck.jpg"), "rb").read()
assert app14_transform(ycck) == 2, "expected ImageMagick to write Adobe YCCK"
ink = ImageCms.profileToProfile(photo, srgb, cmyk_profile, renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="CMYK")
adobe_cmyk = save("cmyk-adobe.jpg", ink, "JPEG", cmyk_icc, quality=95)
assert app14_transform(adobe_cmyk) == 0, "expected Pillow to write Adobe CMYK"
# Pillow inverts what it writes: inverted ink, written inverted, is stored as the ink itself.
inverted = save("cmyk-plain.tmp.jpg", ImageChops.invert(ink), "JPEG", cmyk_icc, quality=95)
os.remove(os.path.join(OUT, "cmyk-plain.tmp.jpg"))
plain_cmyk = strip_app14(inverted)
assert app14_transform(plain_cmyk) is None
with open(os.path.join(OUT, "cmyk-plain.jpg"), "wb") as f:
    f.write(plain_cmyk)
for name, data, polarity in [("cmyk-ycck.jpg", ycck, lambda im: im), ("cmyk-adobe.jpg", adobe_cmyk, lambda im: im),
                             ("cmyk-plain.jpg", plain_cmyk, ImageChops.invert)]:
    decoded = Image.open(io.BytesIO(data))
    assert decoded.mode == "CMYK" and decoded.info.get("icc_profile") == cmyk_icc, name
    ref = ImageCms.profileToProfile(polarity(decoded), cmyk_profile, srgb,
                                    renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    # The known colours: the photo itself. Through SWOP and back it stays within ~15 levels on
    # average per channel (the blues are out of the press gamut); the opposite polarity is 80+ off.
    off = ImageStat.Stat(ImageChops.difference(ref, photo)).mean
    assert max(off) < 25, f"{name}: reference is {off} from the photo: CMYK polarity wrong?"
    with open(os.path.join(OUT, name + ".srgb"), "wb") as f:
        f.write(ref.tobytes())
    manifest[name] = {"width": ref.width, "height": ref.height, "channels": 3}
# A CMYK profile cut to its first half (tag table intact, tag data missing): ignored, with a
# warning; the image goes through the plain CMYK conversion.
with open(os.path.join(OUT, "cmyk-truncated-profile.jpg"), "wb") as f:
    f.write(with_app2(strip_app2(adobe_cmyk), icc_chunks(cmyk_icc[:len(cmyk_icc) // 2])))

# Untagged: the same pixels without a profile.
save("untagged.jpg", in_adobe, "JPEG", None, quality=95)


plain = open(os.path.join(OUT, "untagged.jpg"), "rb").read()
half = len(adobe) // 2
# A profile split in two chunks with the second missing: ignored, with a warning.
with open(os.path.join(OUT, "missing-chunk.jpg"), "wb") as f:
    f.write(with_app2(plain, [b"ICC_PROFILE\0" + bytes([1, 2]) + adobe[:half]]))
# Two chunks in reverse order, the first one repeated: reassembled by sequence number.
with open(os.path.join(OUT, "reordered.jpg"), "wb") as f:
    f.write(with_app2(plain, [b"ICC_PROFILE\0" + bytes([2, 2]) + adobe[half:],
                              b"ICC_PROFILE\0" + bytes([1, 2]) + adobe[:half],
                              b"ICC_PROFILE\0" + bytes([1, 2]) + b"junk" * 10]))
# A profile lcms2 cannot read.
with open(os.path.join(OUT, "corrupt-profile.jpg"), "wb") as f:
    f.write(with_app2(plain, [b"ICC_PROFILE\0" + bytes([1, 1]) + b"\0\0\1\0" + b"not a profile" * 20]))
# A PNG whose iCCP profile is cut short: libpng drops it (a warning, no profile).
save("truncated-profile.png", in_adobe, "PNG", adobe[:400])
# An RGB profile on a gray image: ignored, with a warning.
save("gray-with-rgb-profile.jpg", gray_photo, "JPEG", adobe, quality=95)

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump(manifest, f)
