"""Write torchplug's reference of PyTorch's public names from the installed torch.

    python scripts/generate_compat_reference.py            # writes core/torchplug/_compat/pytorch_names.json
    python scripts/generate_compat_reference.py --check    # exit 1 if the committed file differs

The file is committed so ``python -m torchplug --compat`` works without torch.  "Public" per
module: ``__all__`` where the module defines one; otherwise (and, for ``torch`` itself, in
addition, because ``torch.__all__`` omits its submodules and names such as
``set_grad_enabled``) the names of ``dir()`` that do not start with ``_``, minus what the module
merely imported: other packages' modules (``os``, ``math``, ``np``), objects defined outside the
module's own package (``nn.functional.Tensor``, ``handle_torch_function``), typing helpers and
documentation strings; functions PyTorch removed that stay only to raise are left out.
``torch.Tensor``: every attribute of the class not starting with ``_``.
Each name records its kind (module, class, function, method, property, constant) so the
checks can ask that what torch calls is callable here too.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
import types
from pathlib import Path

from torchplug._compat.reference import REFERENCE_FILE as OUT  # noqa: E402  (the committed data file)

# The modules compared, in report order: torchplug reads the same list to map them.
from torchplug._compat.reference import MODULES  # noqa: E402

# Names of ``torch``'s dir() that are its build and loader machinery, not API.
TORCH_LOADER_NAMES = {"USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH", "PRIVATE_OPS", "TYPE_CHECKING",
                      "classproperty", "get_file_path", "prepare_multiprocessing_environment"}
# Functions PyTorch removed that remain in ``torch``'s dir() only to raise "... is removed" (torch._linalg_utils).
TORCH_REMOVED_NAMES = {"eig", "lstsq", "matrix_rank", "solve", "symeig"}
# Tensor methods that only call those removed functions, or raise "... is removed" themselves.
TENSOR_REMOVED_NAMES = {"eig", "lstsq", "solve", "symeig", "reinforce"}


def kind_of(obj: object) -> str:
    """module / class / function / constant."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def _defined_within(obj: object, package: str) -> bool:
    """Whether a function/class was defined in ``package`` or below (not imported from elsewhere)."""
    module = getattr(obj, "__module__", None)
    if isinstance(obj, types.BuiltinFunctionType):
        # native ops are bound from C under ``torch`` or a private op namespace (torch._C._nn,
        # torch._C._linalg); plain ``torch._C`` holds the override machinery, not ops
        return module is None or module == "torch" or module.startswith("torch._C._")
    if not isinstance(module, str):
        return True
    return module == package or module.startswith(package + ".")


def _is_noise(module: types.ModuleType, name: str, obj: object) -> bool:
    """What a module's dir() shows that it imported rather than defines as API."""
    package = module.__name__
    if isinstance(obj, types.ModuleType):
        return not obj.__name__.startswith(package + ".")  # os, math, np, a sibling module
    if type(obj).__module__ in ("typing", "typing_extensions") or name == "TYPE_CHECKING":
        return True
    if isinstance(obj, type) or callable(obj):
        return not _defined_within(obj, package)
    if isinstance(obj, bool) or isinstance(obj, (str, dict, list, tuple, set, frozenset)):
        return True  # flags, docstring fragments (``reproducibility_notes``), lookup tables
    kind_module = type(obj).__module__
    if kind_module.startswith("torch._jit_internal"):
        return True  # TorchScript annotation helpers (``BroadcastingList1``)
    return not (isinstance(obj, (int, float)) or kind_module.startswith("torch"))


def module_names(modname: str) -> dict[str, str]:
    """Public name -> kind for one torch module."""
    module = importlib.import_module(modname)
    declared = getattr(module, "__all__", None)
    names: dict[str, str] = {}
    if declared is not None:
        for name in declared:
            if hasattr(module, name):
                names[name] = kind_of(getattr(module, name))
    if declared is None or modname == "torch":
        for name in dir(module):
            if name.startswith("_") or name in names or (
                    modname == "torch" and name in TORCH_LOADER_NAMES | TORCH_REMOVED_NAMES):
                continue
            obj = getattr(module, name)
            if not _is_noise(module, name, obj):
                names[name] = kind_of(obj)
    return names


def tensor_names() -> dict[str, str]:
    """Public name -> method/property for torch.Tensor."""
    import torch

    names = {}
    for name in dir(torch.Tensor):
        if name.startswith("_") or name in TENSOR_REMOVED_NAMES:
            continue
        static = inspect.getattr_static(torch.Tensor, name)
        names[name] = "method" if callable(static) and not hasattr(static, "__set__") else "property"
    return names


def build() -> dict[str, object]:
    import torch

    for modname in MODULES:  # every module first: dir() of a package lists the submodules imported so far
        if modname != "torch.Tensor":
            importlib.import_module(modname)
    modules = {}
    for modname in MODULES:
        names = tensor_names() if modname == "torch.Tensor" else module_names(modname)
        modules[modname] = dict(sorted(names.items()))
    return {
        "torch_version": torch.__version__,
        "generated_by": "python scripts/generate_compat_reference.py",
        "modules": modules,
    }


def render(data: dict[str, object]) -> str:
    """The file's text: stable order, one name per line, so a regenerated file diffs by name."""
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print("up to date" if same else f"{args.out} differs from what the installed torch gives")
        return 0 if same else 1
    args.out.write_text(text)
    counts = json.loads(text)["modules"]
    print(f"wrote {args.out}: {sum(len(v) for v in counts.values())} names in {len(counts)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
