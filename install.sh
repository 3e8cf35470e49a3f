#!/usr/bin/env bash
# Bracket set-up: one idempotent script. Run it again at any time; it only does what is missing.
#
#   ./install.sh              app venv (.venv) + requirements, .env, vendor/ trainers, demo dataset
#   ./install.sh --trainers   also the trainer virtualenvs of vendor/sd-scripts and vendor/musubi-tuner
#   ./install.sh --tests      also what the browser and PostgreSQL tests need (Debian/Ubuntu)
#
# Variables: PYTHON (python to build .venv with, default python3), TORCH_INDEX_URL (extra pip
# index for torch in .venv, e.g. the PyTorch CPU wheels; default: PyPI only),
# TRAINER_TORCH (torch packages of the trainer venvs, default "torch torchvision"),
# TRAINER_TORCH_INDEX_URL (their index; default CUDA 12.8 wheels when nvidia-smi exists, else the
# PyTorch CPU wheels, else PyPI), TRAINER_VENVS (default "sd-scripts musubi-tuner").
set -euo pipefail

cd "$(dirname "$0")"
ROOT="$(pwd)"
WITH_TRAINERS=0
WITH_TESTS=0
for argument in "$@"; do
    case "$argument" in
        --trainers) WITH_TRAINERS=1 ;;
        --tests) WITH_TESTS=1 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $argument (use --trainers, --tests or --help)" >&2; exit 2 ;;
    esac
done

say() { printf '\n== %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }

PYTHON="${PYTHON:-python3}"
VENV_PY="$ROOT/.venv/bin/python"

# --- 1. the app's virtualenv --------------------------------------------------------------
say "Python virtualenv (.venv)"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "No $PYTHON found. Install Python 3.11 or newer (or set PYTHON=/path/to/python3.11)." >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "$PYTHON is $("$PYTHON" --version 2>&1); Bracket needs Python 3.11 or newer (set PYTHON=...)." >&2
    exit 1
fi
if [ ! -x "$VENV_PY" ]; then
    if ! "$PYTHON" -m venv .venv; then
        echo "Could not create .venv. On Debian/Ubuntu: sudo apt-get install python3-venv" >&2
        exit 1
    fi
else
    echo ".venv exists; keeping it."
fi

say "Requirements (requirements.txt)"
PIP_EXTRA=()
if [ -n "${TORCH_INDEX_URL:-}" ]; then
    # e.g. TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu for the small CPU-only torch
    PIP_EXTRA=(--extra-index-url "$TORCH_INDEX_URL")
fi
"$VENV_PY" -m pip install --upgrade pip >/dev/null || warn "could not upgrade pip; continuing with $("$VENV_PY" -m pip --version)"
if ! "$VENV_PY" -m pip install "${PIP_EXTRA[@]}" -r requirements.txt; then
    echo "pip could not install requirements.txt (see above). Check the network and run ./install.sh again." >&2
    exit 1
fi

# --- 2. settings ---------------------------------------------------------------------------
say "Settings (.env)"
if [ -f .env ]; then
    echo ".env exists; keeping it."
elif [ -f .env.example ]; then
    cp .env.example .env
    echo "Wrote .env from .env.example; edit it to set model paths and folders."
fi

# --- 3. the trainers (git submodules in vendor/) -------------------------------------------
say "Trainers (vendor/sd-scripts, vendor/musubi-tuner)"
if command -v git >/dev/null 2>&1 && [ -e .git ]; then
    if git submodule update --init --depth 1; then
        echo "vendor/ trainers are at their pinned commits."
    else
        warn "could not fetch vendor/ (no network?). The CPU demo works without them; for the real"
        warn "trainers run this later: git submodule update --init --depth 1"
    fi
else
    warn "not a git checkout (or no git): clone kohya-ss/sd-scripts and kohya-ss/musubi-tuner into vendor/"
    warn "yourself, or set BRACKET_SD_SCRIPTS_DIR / BRACKET_MUSUBI_DIR in .env."
fi

# --- 4. the demo dataset -------------------------------------------------------------------
say "Demo dataset"
DEMO_DIR="$("$VENV_PY" -c 'from bracket import settings; print(settings.get_settings().demo_data_dir)' 2>/dev/null || true)"
DEMO_DIR="${DEMO_DIR:-runs/demo-data}"
if "$VENV_PY" -m bracket demo-data "$DEMO_DIR"; then
    :
else
    warn "could not write the demo dataset; make it later with: .venv/bin/python -m bracket demo-data $DEMO_DIR"
fi

# --- 5. optional: trainer virtualenvs ------------------------------------------------------
# torch and torchvision must be one build. PyPI's Linux x86_64 torchvision is linked against
# PyPI's (CUDA) torch — libtorch_cuda.so, libc10_cuda.so — so beside a CPU-only "+cpu" torch it
# cannot load its operators ("operator torchvision::nms does not exist"), whatever the version.
# A CPU machine therefore takes both from the PyTorch CPU index (small); when that index cannot be
# reached, both from PyPI (the CUDA build: several GB, but it runs on the CPU). Then it checks.
install_trainer_torch() {  # $1 = python of the trainer venv
    local python="$1" index="${TRAINER_TORCH_INDEX_URL:-}"
    # shellcheck disable=SC2086
    set -- ${TRAINER_TORCH:-torch torchvision}
    if [ -z "$index" ] && command -v nvidia-smi >/dev/null 2>&1; then
        index=https://download.pytorch.org/whl/cu128
    fi
    if [ -n "$index" ]; then
        "$python" -m pip install "$@" --index-url "$index" || return 1
    elif ! "$python" -m pip install "$@" --index-url https://download.pytorch.org/whl/cpu; then
        warn "the PyTorch CPU index is not reachable; installing torch and torchvision from PyPI instead"
        warn "(a matched pair, CUDA build: large, runs on the CPU)"
        "$python" -m pip install "$@" || return 1
    fi
    if ! "$python" -c "import torch, torchvision.ops" >/dev/null 2>&1; then
        warn "torchvision does not load beside this torch (two builds mixed); reinstalling a matched pair from PyPI"
        "$python" -m pip install --force-reinstall "$@" || return 1
        "$python" -c "import torch, torchvision.ops" || { warn "torchvision still does not load; see above"; return 1; }
    fi
}

make_trainer_venv() {  # $1 = checkout folder; the rest = pip install arguments run inside it
    local folder="$1"; shift
    local python="$folder/.venv/bin/python"
    if [ ! -x "$python" ]; then
        "$PYTHON" -m venv "$folder/.venv" || { warn "could not create $folder/.venv"; return 1; }
    fi
    "$python" -m pip install --upgrade pip >/dev/null || true
    install_trainer_torch "$python" || { warn "torch did not install into $folder/.venv"; return 1; }
    (cd "$folder" && "$python" -m pip install "$@") || { warn "the requirements of $folder did not install"; return 1; }
    "$python" -m pip install tensorboard >/dev/null || warn "tensorboard did not install into $folder/.venv"
    echo "Trainer python: $python"
}

# TRAINER_VENVS: which trainer venvs --trainers makes (default both; the slow SDXL test makes sd-scripts only)
TRAINER_VENVS="${TRAINER_VENVS:-sd-scripts musubi-tuner}"
if [ "$WITH_TRAINERS" = 1 ]; then
    say "Trainer virtualenvs"
    case " $TRAINER_VENVS " in *" sd-scripts "*)
        if [ -f vendor/sd-scripts/requirements.txt ]; then
            make_trainer_venv vendor/sd-scripts -r requirements.txt \
                || warn "sd-scripts venv incomplete; fix the error above and run ./install.sh --trainers again."
        else
            warn "vendor/sd-scripts is empty; run git submodule update --init --depth 1 first."
        fi ;;
    esac
    case " $TRAINER_VENVS " in *" musubi-tuner "*)
        if [ -f vendor/musubi-tuner/pyproject.toml ]; then
            make_trainer_venv vendor/musubi-tuner -e . \
                || warn "musubi-tuner venv incomplete; fix the error above and run ./install.sh --trainers again."
        else
            warn "vendor/musubi-tuner is empty; run git submodule update --init --depth 1 first."
        fi ;;
    esac
fi

# --- 6. optional: what the browser and PostgreSQL tests need --------------------------------
if [ "$WITH_TESTS" = 1 ]; then
    say "Test dependencies (chromium, postgresql)"
    APT_PACKAGES=(chromium postgresql)
    if ! command -v apt-get >/dev/null 2>&1; then
        warn "no apt-get here; install Chromium (or run: .venv/bin/python -m playwright install chromium)"
        warn "and PostgreSQL with your package manager."
    elif [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update && apt-get install -y "${APT_PACKAGES[@]}" || warn "apt-get failed; see above."
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo apt-get update && sudo apt-get install -y "${APT_PACKAGES[@]}" || warn "apt-get failed; see above."
    else
        warn "not root and no password-less sudo; run: sudo apt-get install -y ${APT_PACKAGES[*]}"
    fi
fi

say "Done"
echo "Start the app:   .venv/bin/python app.py"
echo "Or headless:     .venv/bin/python -m bracket run --preset demo-cpu --budget 4"
