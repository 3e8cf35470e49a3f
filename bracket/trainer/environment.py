"""What a trainer process sees of Bracket's environment: an allow-list, never Bracket's credentials.

Bracket's own process holds secrets a trainer has no use for — the app's login
(``BRACKET_AUTH``), the judge's key (``BRACKET_VLM_API_KEY``), the store's URL and password
(``BRACKET_STORAGE_URL``, ``PGPASSWORD``) and whatever else ``.env`` sets — and whatever a
trainer prints lands in the served ``stdout.log`` and the stored log tail. So a trainer's
environment is built from:

* the variables of :data:`ALLOWED_NAMES` and :data:`ALLOWED_PREFIXES` — what a trainer
  genuinely needs: the system's (``PATH``, ``HOME``, locale, temporary folder, Windows'
  system folders), the GPU's (``CUDA_*``, ``NVIDIA_*``, ``NCCL_*``, ROCm's), the libraries'
  caches and switches (``HF_*`` — the Hugging Face token among them, for gated downloads —
  ``TORCH*``, ``PYTORCH_*``, ``ACCELERATE_*``, ``TRITON_*``, …), proxies and certificates;
* the names (``fnmatch`` patterns, comma-separated) in ``BRACKET_TRAINER_ENV``, for what
  else the person starting Bracket wants passed (``WANDB_*`` for Weights & Biases, say);
* the adapter's own variables (those it sets or changes: thread counts, telemetry off, the
  TensorBoard folder) — given as ``env`` beside ``base``;

never a variable of :data:`CREDENTIALS`, nor one whose value holds a credential's value.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping

from bracket import settings

#: variables a trainer gets by exact name (compared in upper case: Windows' names are)
ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "TMP", "TEMP",
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CC", "CXX", "VIRTUAL_ENV", "DISPLAY",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    # Windows
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "USERPROFILE", "USERNAME", "USERDOMAIN",
    "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)",
    "PROGRAMW6432", "COMMONPROGRAMFILES", "COMMONPROGRAMFILES(X86)", "ALLUSERSPROFILE", "PUBLIC", "OS",
    "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER",
})
#: variables a trainer gets by the start of their name
ALLOWED_PREFIXES = (
    "LC_", "XDG_", "PYTHON", "CONDA_",
    "CUDA_", "CUDNN_", "NVIDIA_", "NCCL_", "ROCM_", "HIP_", "HSA_", "ROCR_",
    "HF_", "HUGGINGFACE_", "HUGGING_FACE_", "TRANSFORMERS_", "DIFFUSERS_", "DATASETS_", "TOKENIZERS_",
    "SAFETENSORS_", "ACCELERATE_", "TORCH", "PYTORCH_", "TRITON_", "XFORMERS_", "BNB_",
    "UNSLOTH_", "AXOLOTL_",
    "OMP_", "KMP_", "MKL_", "OPENBLAS_", "NUMEXPR_", "VECLIB_", "TF_", "TENSORBOARD_", "TQDM_", "MPL",
)
#: Bracket's own credentials: never in a trainer's environment, whatever lists them
CREDENTIALS = ("BRACKET_AUTH", "BRACKET_VLM_API_KEY", "BRACKET_STORAGE_URL", "PGPASSWORD")
#: where the person starting Bracket lists more variables to pass (``fnmatch`` patterns)
PASS_THROUGH_ENV = "BRACKET_TRAINER_ENV"
#: shorter credential values are not searched for in other values (they would match anything)
_MIN_SECRET = 4


def _passed_through() -> list[str]:
    return [p.strip().upper() for p in settings.env(PASS_THROUGH_ENV).split(",") if p.strip()]


def allowed(name: str, extra: list[str] | None = None) -> bool:
    """Whether a variable of Bracket's environment may reach a trainer."""
    upper = name.upper()
    if upper in CREDENTIALS:
        return False
    if upper in ALLOWED_NAMES or upper.startswith(ALLOWED_PREFIXES):
        return True
    patterns = _passed_through() if extra is None else extra
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in patterns)


def _credential_values(base: Mapping[str, str]) -> list[str]:
    values = [str(base.get(name) or "") for name in CREDENTIALS]
    url = str(base.get("BRACKET_STORAGE_URL") or "")
    if "://" in url and "@" in url.split("://", 1)[1]:
        userinfo = url.split("://", 1)[1].rsplit("@", 1)[0]
        values.append(userinfo.partition(":")[2])  # the URL's password
    login = str(base.get("BRACKET_AUTH") or "")
    values.append(login.partition(":")[2])  # user:pass -> the password alone
    return [v for v in values if len(v) >= _MIN_SECRET]


def trainer_environment(env: Mapping[str, str] | None = None, *,
                        base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a trainer process gets from ``env`` (default: ``base``, which defaults to
    ``os.environ``): variables of ``base`` only when :func:`allowed`, variables ``env`` adds or
    changes (the adapter's own) as they are; never a credential of Bracket's, nor a variable
    whose value holds one."""
    settings.load_env_file()  # .env's values are in os.environ from here on: filtered like the rest
    base = os.environ if base is None else base
    env = base if env is None else env
    extra = _passed_through()
    secrets = _credential_values(base)
    kept: dict[str, str] = {}
    for name, value in env.items():
        value = str(value)
        own = base.get(name) != value  # set or changed by the adapter (or absent from Bracket's)
        if name.upper() in CREDENTIALS or not (own or allowed(name, extra)):
            continue
        if any(secret in value for secret in secrets):
            continue
        kept[name] = value
    return kept
