"""Capturing the byocl regions TVM calls, to replay one alone with `byocl replay`.

The regions read $BYOCL_CAPTURE_DIR (and $BYOCL_CAPTURE_REGION) at every call, in C: an
exported library captures too, with no Python. This sets them for a block of code.
"""

import contextlib
import os

DIR_ENV = "BYOCL_CAPTURE_DIR"
REGION_ENV = "BYOCL_CAPTURE_REGION"


@contextlib.contextmanager
def capture(folder, region=None):
    """While the block runs, each byocl region that TVM calls (or only `region`, a symbol
    that byocl_tvm.regions lists) writes its call into folder/<symbol>: its inputs, its
    outputs, the region as a byocl module and a manifest, as `byocl run --capture` does.
    A region called again replaces its folder: the last call is kept. `folder` is made
    when missing (not its parents)."""
    saved = {name: os.environ.get(name) for name in (DIR_ENV, REGION_ENV)}
    os.environ[DIR_ENV] = os.fspath(folder)
    if region:
        os.environ[REGION_ENV] = region
    else:
        os.environ.pop(REGION_ENV, None)
    try:
        yield os.fspath(folder)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
