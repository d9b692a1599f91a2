"""The ``planexec`` command a ``pip install`` brings: the same program as
the Rust binary (``planexec run``, ``serve``, ``approve``, ``model pull``, …),
run by the native module."""

import sys

from . import _native


def main() -> None:
    sys.exit(_native.cli_main(sys.argv))


if __name__ == "__main__":
    main()
