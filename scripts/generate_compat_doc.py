"""Write ``docs/compat.md``: which of PyTorch's public names torchplug provides, per module.

    python scripts/generate_compat_doc.py           # rewrite docs/compat.md
    python scripts/generate_compat_doc.py --check   # exit 1 if docs/compat.md is out of date

Run it in an environment with every plugin and backend of this repository installed (the
development virtualenv): the page describes the full installation.  It needs no torch: the
reference of PyTorch's names is the committed ``core/torchplug/_compat/pytorch_names.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "compat.md"


def render() -> str:
    """The page's text, from the coverage of every reference module."""
    from torchplug.__main__ import compat_report

    return compat_report(None, "markdown")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with docs/compat.md instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = DOC.exists() and DOC.read_text(encoding="utf-8") == text
        print("docs/compat.md is up to date" if same else
              "docs/compat.md is out of date: regenerate it with python scripts/generate_compat_doc.py")
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
