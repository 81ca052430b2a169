"""Colour fixtures for ColorManagementTests, made at test time from a sample photo with Pillow's
ImageCms (Little CMS 2 inside Pillow: an implementation independent of PoiKit's C code).

    make_color_fixtures.py OUT_DIR [DISPLAY_P3_ICC]

For each case: the tagged file, and the colour-managed reference (Pillow's conversion of the same
decoded pixels to sRGB, perceptual intent) as raw 8-bit samples, full size. Profiles from Debian's
icc-profiles-free (installed by `make setup`). Also damaged-profile variants.
"""
import io, json, os, struct, sys
from PIL import Image, ImageCms

OUT = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ICC = "/usr/share/color/icc"
os.makedirs(OUT, exist_ok=True)
srgb = ImageCms.createProfile("sRGB")
adobe_path = os.path.join(ICC, "compatibleWithAdobeRGB1998.icc")
gray_path = os.path.join(ICC, "Gray.icc")
manifest = {}

photo = Image.open(os.path.join(ROOT, "Samples/images/coffee.jpg")).convert("RGB")
photo.thumbnail((480, 480))


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

# Untagged: the same pixels without a profile.
save("untagged.jpg", in_adobe, "JPEG", None, quality=95)


def with_app2(jpeg, chunks):
    """JPEG bytes with the given APP2 payloads inserted after SOI (any existing ones kept)."""
    segs = b"".join(b"\xff\xe2" + struct.pack(">H", len(c) + 2) + c for c in chunks)
    return jpeg[:2] + segs + jpeg[2:]


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
# An RGB profile on a gray image: ignored, with a warning.
save("gray-with-rgb-profile.jpg", gray_photo, "JPEG", adobe, quality=95)

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump(manifest, f)
