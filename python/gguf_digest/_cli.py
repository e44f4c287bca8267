"""The ``gguf-digest`` command the wheel installs: the binary's own code,
compiled into the extension, run with this process's arguments."""

from __future__ import annotations

import os
import signal
import sys

from . import _native


def main() -> None:
    # Python turns Ctrl-C into KeyboardInterrupt, which the command (Rust,
    # with the GIL released) would never see: give SIGINT its default action
    # back, so that it ends the command as it ends the binary.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    argv = [os.fsencode(a) for a in sys.argv]
    argv[0] = b"gguf-digest"
    # Python buffers nothing here, but flush anyway: the command writes to
    # the file descriptors directly.
    sys.stdout.flush()
    sys.exit(_native.main(argv))


if __name__ == "__main__":
    main()
