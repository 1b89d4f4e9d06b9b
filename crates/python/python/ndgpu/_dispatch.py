"""The default backend, and the module-level functions (``ndgpu.matmul``,
``ndgpu.linalg.solve``, ...) that run a :class:`Backend` method on the backend of their
first resident operand, else on the default backend.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Optional, Union, cast

from ._backend import Array, Backend

__all__ = ["default_backend", "set_default_backend", "resolve", "forward"]

_default: Optional[Backend] = None
_lock = threading.Lock()


def default_backend() -> Backend:
    """The backend the module-level functions use (opened as ``auto`` on first use)."""
    global _default
    with _lock:
        if _default is None:
            _default = Backend("auto")
        return _default


def set_default_backend(b: Union[str, Backend]) -> Backend:
    """Makes `b` (a name or an opened backend) the default, and returns it."""
    global _default
    opened = b if isinstance(b, Backend) else Backend(b)
    with _lock:
        _default = opened
    return opened


def resolve(b: Union[None, str, Backend]) -> Backend:
    """`b` opened: the default backend for None, a backend for a name."""
    if b is None:
        return default_backend()
    return b if isinstance(b, Backend) else Backend(b)


def _on(*xs: Any) -> Backend:
    """The backend of the first resident operand, else the default."""
    for x in xs:
        if isinstance(x, Array):
            return cast(Backend, x.backend)  # the Backend that made it resident
    return default_backend()


def forward(module: str, name: str) -> Callable[..., Any]:
    """The function `name` of `module`: :meth:`Backend.<name>`, with its signature (less
    ``self``) and documentation, on the backend of the first resident one of its
    operands (the arguments without a default), else on the default backend."""
    method = getattr(Backend, name)
    signature = inspect.signature(method)
    params = list(signature.parameters.values())[1:]
    names = [p.name for p in params if p.default is p.empty]
    operands = len(names)

    def function(*args: Any, **kwargs: Any) -> Any:
        xs = args[:operands] + tuple(kwargs.get(n) for n in names[len(args) :])
        return getattr(_on(*xs), name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = method.__doc__
    function.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return function
