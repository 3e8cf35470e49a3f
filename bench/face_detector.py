"""What the face-identity judge adds per image: OpenCV's face detector at 512 and 1024 px.

``python -m bench.face_detector [--repeats N]``: the median time of
``bracket.judge.faces.FaceDetector.largest_face`` (grey conversion, the Haar cascade over every
scale, the crop) on a picture with one face drawn as the tests draw it (a third of the picture
wide) and on one without a face, on the CPU. The crop's embedding is one more forward pass of the
likeness model (or the face model) per in-distribution sample with a face, as costly as a
likeness image (``bench.image_judges``). Results go to ``bench/results/face_detector.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import write_result


def timed(function: Callable[[Any], Any], argument: Any, repeats: int) -> float:
    """The median seconds of ``function(argument)`` over ``repeats`` calls (after one warm-up)."""
    function(argument)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function(argument)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.face_detector")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    from bracket.judge.faces import FaceDetector
    from tests.judge.drawn_faces import face_scene, faceless

    detector = FaceDetector()
    rows = []
    for size in (512, 1024):
        face = face_scene((225, 185, 160), (40, 160, 60), canvas=size, face=size // 3, at=(size // 3, size // 4))
        for kind, picture in (("one face", face), ("no face", faceless((40, 160, 60), size))):
            seconds = timed(detector.largest_face, picture, args.repeats)
            found = detector.largest_face(picture) is not None
            rows.append({"size": size, "picture": kind, "found": found, "ms": round(seconds * 1000, 1)})
            print(f"{size} px, {kind}: {seconds * 1000:.0f} ms (face found: {found})")
    print(write_result("face_detector", {"repeats": args.repeats, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
