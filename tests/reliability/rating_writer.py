"""A Bracket process that trains and takes ratings at the same time, to be SIGKILLed by a test.

``python tests/reliability/rating_writer.py SESSION_FOLDER ACK_FILE`` resumes the session in a
background thread and, once a run is done, rates it over and over; after each rating is
committed it appends the rating's number to ACK_FILE. A test kills this process at some
point and then checks that every acknowledged rating is in the store.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bracket.session import Session  # noqa: E402 - after the path above
from tests.fakes.waiting import wait_until  # noqa: E402


def main(folder: str, ack_file: str) -> int:
    session = Session.open(folder)
    session.start()
    done = wait_until(lambda: [r for r in session.store.runs(session.name, with_series=False)
                               if r["status"] == "done"], 600, "a finished run")
    run_id = done[0]["id"]
    with open(ack_file, "a", encoding="utf-8") as ack:
        number = 0
        while True:
            number += 1
            session.add_rating(run_id, 1 + number % 10)
            ack.write(f"{number}\n")
            ack.flush()
            os.fsync(ack.fileno())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
