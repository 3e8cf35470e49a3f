#!/usr/bin/env bash
# Bracket set-up: one idempotent script. Run it again at any time; it only does what is missing.
#
#   ./install.sh              app venv (.venv) + requirements, .env, vendor/ trainers, demo dataset
#   ./install.sh --trainers   also the trainer virtualenvs of vendor/sd-scripts, vendor/musubi-tuner and vendor/ai-toolkit
#   ./install.sh --llm-trainers  also the LLM trainer virtualenvs vendor/{axolotl,torchtune,unsloth}/.venv
#   ./install.sh --tests      also what the browser and PostgreSQL tests need (Debian/Ubuntu)
#   ./install.sh --judges     also fetch the image judges' models (CLIP, DINOv2) into the Hugging Face
#                             cache and name them in .env (needs internet; a search never downloads)
#
# Variables: PYTHON (python to build .venv with, default python3), TORCH_INDEX_URL (extra pip
# index for torch in .venv, e.g. the PyTorch CPU wheels; default: PyPI only),
# TRAINER_TORCH (torch packages of the trainer venvs, default "torch torchvision"),
# TRAINER_TORCH_INDEX_URL (their index; default CUDA 12.8 wheels when nvidia-smi exists, else the
# PyTorch CPU wheels, else PyPI), TRAINER_VENVS (default "sd-scripts musubi-tuner ai-toolkit"),
# LLM_TORCH (the exact torch of the LLM trainer venvs, default torch==2.13.0; the trainer
# packages are installed under a constraint that keeps it), LLM_TORCH_INDEX_URL (its index).
set -euo pipefail

cd "$(dirname "$0")"
ROOT="$(pwd)"
WITH_TRAINERS=0
WITH_LLM_TRAINERS=0
WITH_TESTS=0
WITH_JUDGES=0
for argument in "$@"; do
    case "$argument" in
        --trainers) WITH_TRAINERS=1 ;;
        --llm-trainers) WITH_LLM_TRAINERS=1 ;;
        --tests) WITH_TESTS=1 ;;
        --judges) WITH_JUDGES=1 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option $argument (use --trainers, --llm-trainers, --tests, --judges or --help)" >&2; exit 2 ;;
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
# Bracket itself, in place: `python -m bracket` and `bracket` then work from any folder
"$VENV_PY" -m pip install --no-deps -e . >/dev/null || warn "could not install Bracket into .venv in editable mode; run its commands from this folder"
# pip wrote the packages' bytecode; Bracket's own too, so the first `python app.py` does not
# compile bracket/ and ui/ (~0.2 CPU-s of its start, docs/BENCHMARKS.md §3)
"$VENV_PY" -m compileall -q app.py bracket ui >/dev/null || warn "could not compile Bracket's sources (harmless)"

# --- 2. settings ---------------------------------------------------------------------------
say "Settings (.env)"
if [ -f .env ]; then
    echo ".env exists; keeping it."
elif [ -f .env.example ]; then
    cp .env.example .env
    echo "Wrote .env from .env.example; edit it to set model paths and folders."
fi

# --- 3. the trainers (git submodules in vendor/) -------------------------------------------
say "Trainers (vendor/sd-scripts, vendor/musubi-tuner, vendor/ai-toolkit)"
if command -v git >/dev/null 2>&1 && [ -e .git ]; then
    if git submodule update --init --depth 1; then
        echo "vendor/ trainers are at their pinned commits."
    else
        warn "could not fetch vendor/ (no network?). The CPU demo works without them; for the real"
        warn "trainers run this later: git submodule update --init --depth 1"
    fi
else
    warn "not a git checkout (or no git): clone kohya-ss/sd-scripts, kohya-ss/musubi-tuner and ostris/ai-toolkit"
    warn "into vendor/ yourself, or set BRACKET_SD_SCRIPTS_DIR / BRACKET_MUSUBI_DIR / BRACKET_AI_TOOLKIT_DIR in .env."
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
    local folder; folder="$(cd "$1" && pwd)" || { warn "no folder $1"; return 1; }; shift
    local python="$folder/.venv/bin/python"  # absolute: the requirements install from inside $folder
    if [ ! -x "$python" ]; then
        "$PYTHON" -m venv "$folder/.venv" || { warn "could not create $folder/.venv"; return 1; }
    fi
    "$python" -m pip install --upgrade pip >/dev/null || true
    install_trainer_torch "$python" || { warn "torch did not install into $folder/.venv"; return 1; }
    (cd "$folder" && "$python" -m pip install "$@") || { warn "the requirements of $folder did not install"; return 1; }
    "$python" -m pip install tensorboard >/dev/null || warn "tensorboard did not install into $folder/.venv"
    echo "Trainer python: $python"
}

# TRAINER_VENVS: which trainer venvs --trainers makes (default all three; the slow SDXL test makes sd-scripts only)
TRAINER_VENVS="${TRAINER_VENVS:-sd-scripts musubi-tuner ai-toolkit}"
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
    case " $TRAINER_VENVS " in *" ai-toolkit "*)
        # ai-toolkit's README installs torch, torchvision and torchaudio first, then requirements.txt
        if [ -f vendor/ai-toolkit/requirements.txt ]; then
            TRAINER_TORCH="${TRAINER_TORCH:-torch torchvision torchaudio}" \
                make_trainer_venv vendor/ai-toolkit -r requirements.txt \
                || warn "ai-toolkit venv incomplete; fix the error above and run ./install.sh --trainers again."
        else
            warn "vendor/ai-toolkit is empty; run git submodule update --init --depth 1 first."
        fi ;;
    esac
fi

# --- 5b. optional: LLM trainer virtualenvs (Axolotl, torchtune, Unsloth) ---------------------
# One venv per trainer, inside the clone (vendor/<name>/.venv, ignored by git). torch goes in
# first at an exact version (LLM_TORCH) and every later install runs under a constraint file
# holding it, so no trainer package swaps it for another build. The pins are versions that
# install and train together (checked by tests/llm/test_llm_real_trainers.py):
#   axolotl 0.19.0: the last release for Python 3.11 (0.20 needs 3.12); pins transformers itself;
#   torchtune 0.6.1 (the last release) imports only with torchao 0.11; Bracket's generation step
#     there needs transformers and a peft that accepts that torchao (0.18 does, 0.21 refuses);
#     bitsandbytes for the paged_adamw_8bit optimizer;
#   unsloth 2026.10.9 with its own dependencies (it imports and trains on the CPU too).
LLM_TRAINER_PACKAGES_AXOLOTL=(axolotl==0.19.0 tensorboard)
LLM_TRAINER_PACKAGES_TORCHTUNE=(torchtune==0.6.1 "torchao==0.11.*" "peft==0.18.*" transformers bitsandbytes tensorboard)
LLM_TRAINER_PACKAGES_UNSLOTH=(unsloth==2026.10.9 tensorboard)

make_llm_trainer_venv() {  # $1 = trainer name; the rest = its packages
    local name="$1"; shift
    local folder="vendor/$name"
    local python="$folder/.venv/bin/python"
    local constraints="$folder/.venv/bracket-torch-constraint.txt"
    local started=$SECONDS
    mkdir -p "$folder"
    if [ ! -x "$python" ]; then
        "$PYTHON" -m venv "$folder/.venv" || { warn "could not create $folder/.venv"; return 1; }
    fi
    "$python" -m pip install --upgrade pip >/dev/null || true
    # --no-cache-dir: nothing of these installs is kept outside the clone
    local torch_args=(--no-cache-dir "${LLM_TORCH:-torch==2.13.0}")
    if [ -n "${LLM_TORCH_INDEX_URL:-}" ]; then
        torch_args+=(--extra-index-url "$LLM_TORCH_INDEX_URL")
    fi
    "$python" -m pip install "${torch_args[@]}" || { warn "torch did not install into $folder/.venv"; return 1; }
    "$python" -c 'import torch; print("torch==" + torch.__version__)' > "$constraints" || return 1
    "$python" -m pip install --no-cache-dir -c "$constraints" "$@" || { warn "the $name packages did not install"; return 1; }
    # A CPU torch beside PyPI's torchvision (built for the CUDA torch) breaks every transformers
    # import ("operator torchvision::nms does not exist"); text training does not use it.
    if "$python" -m pip show torchvision >/dev/null 2>&1 && ! "$python" -c 'import torchvision' 2>/dev/null; then
        echo "torchvision does not load with this torch; removing it from $folder/.venv (LLMs do not need it)."
        "$python" -m pip uninstall -y torchvision >/dev/null || warn "could not remove torchvision from $folder/.venv"
    fi
    echo "Trainer python: $python ($((SECONDS - started)) s)"
}

if [ "$WITH_LLM_TRAINERS" = 1 ]; then
    say "LLM trainer virtualenvs (vendor/axolotl, vendor/torchtune, vendor/unsloth; in parallel)"
    # The three installs run side by side (each waits on downloads and unpacking, rarely on the
    # CPU); each one's output goes to vendor/<name>/install.log and its tail is shown on failure.
    LLM_PIDS=()
    for name in axolotl torchtune unsloth; do
        mkdir -p "vendor/$name"
        case "$name" in
            axolotl) packages=("${LLM_TRAINER_PACKAGES_AXOLOTL[@]}") ;;
            torchtune) packages=("${LLM_TRAINER_PACKAGES_TORCHTUNE[@]}") ;;
            unsloth) packages=("${LLM_TRAINER_PACKAGES_UNSLOTH[@]}") ;;
        esac
        make_llm_trainer_venv "$name" "${packages[@]}" > "vendor/$name/install.log" 2>&1 &
        LLM_PIDS+=("$!")
    done
    LLM_FAILED=0
    for index in 0 1 2; do
        name=$(echo axolotl torchtune unsloth | cut -d' ' -f$((index + 1)))
        if wait "${LLM_PIDS[$index]}"; then
            tail -n 1 "vendor/$name/install.log"
        else
            LLM_FAILED=1
            tail -n 30 "vendor/$name/install.log" >&2
            warn "the $name venv is incomplete (whole log: vendor/$name/install.log)"
        fi
    done
    if [ "$LLM_FAILED" = 1 ]; then
        echo "Fix the error above and run ./install.sh --llm-trainers again." >&2
        exit 1
    fi
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

# --- 7. optional: the image judges' models ---------------------------------------------------
if [ "$WITH_JUDGES" = 1 ]; then
    say "Image judges' models (Hugging Face cache, named in .env)"
    "$VENV_PY" -m bracket.judge.fetch_models "$ROOT/.env" || warn "fetching the judges' models failed; see above."
fi

say "Done"
echo "Start the app:   .venv/bin/python app.py"
echo "Or headless:     .venv/bin/python -m bracket run --preset demo-cpu"
