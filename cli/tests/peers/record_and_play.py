"""A stand-in agent for the trace proxy's transparency test.

usage: record_and_play.py RECV PLAY STATUS

Writes the bytes of PLAY to stdout in uneven pieces, copies its stdin into
RECV until EOF, then exits with STATUS.
"""
import os
import sys

recv, play, status = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(play, "rb") as f:
    data = f.read()
piece = 7777
for start in range(0, len(data), piece):
    os.write(1, data[start : start + piece])
os.close(1)
with open(recv, "wb") as f:
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        f.write(chunk)
sys.exit(status)
