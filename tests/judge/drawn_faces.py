"""Faces drawn in a test, which OpenCV's bundled frontal-face cascade finds (no photo, no download):
a skin-coloured oval with dark brows and eyes, a shaded nose and a mouth, softened by a blur, on a
plain background, pasted where the test wants it on a larger canvas."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFilter

Colour = tuple[int, int, int]


def drawn_face(size: int, skin: Colour, background: Colour) -> Image.Image:
    """A frontal face filling a ``size``-pixel square of ``background``."""
    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    s = size / 256
    draw.ellipse([68 * s, 40 * s, 188 * s, 210 * s], fill=skin)
    for x in (88, 140):
        draw.rectangle([x * s, 92 * s, (x + 30) * s, 98 * s], fill=(60, 40, 30))  # brow
        draw.ellipse([(x + 4) * s, 106 * s, (x + 26) * s, 120 * s], fill=(40, 30, 30))  # eye
    draw.polygon([(128 * s, 112 * s), (118 * s, 158 * s), (138 * s, 158 * s)],
                 fill=tuple(int(c * 0.9) for c in skin))  # nose
    draw.ellipse([104 * s, 170 * s, 152 * s, 184 * s], fill=(150, 60, 60))  # mouth
    return image.filter(ImageFilter.GaussianBlur(2 * s))


def face_scene(skin: Colour, background: Colour, *, canvas: int = 512, face: int = 160,
               at: tuple[int, int] = (176, 120)) -> Image.Image:
    """A ``canvas``-pixel picture of ``background`` with a ``face``-pixel face whose corner is ``at``:
    the face is a small part of the picture, so what the whole picture looks like is mostly the
    background."""
    image = Image.new("RGB", (canvas, canvas), background)
    image.paste(drawn_face(face, skin, background), at)
    return image


def faceless(background: Colour, canvas: int = 512) -> Image.Image:
    """A picture with no face: a horizontal ramp from ``background`` to white."""
    image = Image.new("RGB", (canvas, canvas), background)
    draw = ImageDraw.Draw(image)
    for x in range(canvas):
        t = x / canvas
        draw.line([(x, 0), (x, canvas)], fill=tuple(round(c + (255 - c) * t) for c in background))
    return image
