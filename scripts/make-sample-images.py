#!/usr/bin/env python3
"""Rebuilds Samples/images/ from scikit-image's bundled data (public domain / CC0, see Samples/README.md).

Usage: .venv/bin/pip download --no-deps scikit-image==0.25.2 -d /tmp/sk && cd /tmp/sk && unzip -o *.whl 'skimage/data/*'
       .venv/bin/python scripts/make-sample-images.py /tmp/sk/skimage/data
The outputs are committed; this script only documents how each one was made.
"""
import shutil
import sys
from pathlib import Path

from PIL import Image, ImageDraw

src = Path(sys.argv[1])
out = Path(__file__).resolve().parent.parent / "Samples" / "images"
out.mkdir(parents=True, exist_ok=True)

def rgb(name):
    return Image.open(src / name).convert("RGB")

# Baseline JPEG, progressive JPEG, originals as shipped.
rgb("coffee.png").save(out / "coffee.jpg", quality=90)
rgb("chelsea.png").save(out / "chelsea-progressive.jpg", quality=90, progressive=True)
shutil.copy(src / "rocket.jpg", out / "rocket.jpg")
shutil.copy(src / "hubble_deep_field.jpg", out / "hubble-deep-field.jpg")
shutil.copy(src / "retina.jpg", out / "retina.jpg")

# EXIF orientation 6 ("rotate 90° clockwise to display"): store the pixels turned 90° counter-
# clockwise, so only a reader that honours the tag shows the astronaut upright.
astro = rgb("astronaut.png")
exif = Image.Exif()
exif[0x0112] = 6
astro.transpose(Image.Transpose.ROTATE_90).save(out / "astronaut-exif6.jpg", quality=88, exif=exif.tobytes())

# PNGs: grayscale originals, a palette image, and an RGBA cut-out with real transparency.
shutil.copy(src / "coins.png", out / "coins.png")
shutil.copy(src / "brick.png", out / "brick.png")
rgb("coffee.png").quantize(colors=64).save(out / "coffee-palette.png")
cat = rgb("chelsea.png").convert("RGBA")
mask = Image.new("L", cat.size, 0)
ImageDraw.Draw(mask).ellipse((20, 10, cat.width - 20, cat.height - 10), fill=255)
cat.putalpha(mask)
cat.save(out / "chelsea-cutout.png")

# Deliberately broken: the first 40% of a real JPEG (what an interrupted upload leaves).
data = (src / "rocket.jpg").read_bytes()
(out / "truncated.jpg").write_bytes(data[: len(data) * 4 // 10])
print("wrote", sorted(p.name for p in out.iterdir()))
