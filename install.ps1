# Bracket set-up for Windows (PowerShell): one idempotent script, the twin of install.sh.
#
#   .\install.ps1              app venv (.venv) + requirements, .env, vendor\ trainers, demo dataset
#   .\install.ps1 -Trainers    also the trainer virtualenvs of vendor\sd-scripts, vendor\musubi-tuner and vendor\ai-toolkit
#   .\install.ps1 -LlmTrainers also the LLM trainer virtualenvs vendor\{axolotl,torchtune,unsloth}\.venv
#   .\install.ps1 -Tests       also says what the browser and PostgreSQL tests need
#   .\install.ps1 -Judges      also fetch the image judges' models (CLIP, DINOv2) into the Hugging Face
#                              cache and name them in .env (needs internet; never done during a search)
#
# Variables: PYTHON (python to build .venv with, default "py -3" or python), TORCH_INDEX_URL
# (extra pip index for torch in .venv), TRAINER_TORCH (torch packages of the trainer venvs,
# default "torch torchvision"), TRAINER_TORCH_INDEX_URL (their index; default CUDA 12.8 wheels
# when nvidia-smi exists, else the PyTorch CPU wheels, else PyPI), TRAINER_VENVS (default
# "sd-scripts musubi-tuner ai-toolkit"), LLM_TORCH (the exact torch of the LLM trainer venvs, default
# torch==2.13.0; the trainer packages are installed under a constraint that keeps it),
# LLM_TORCH_INDEX_URL (its index).
#
# The twin of install.sh, step for step. It was written and reviewed on Linux, where it cannot
# run: it has not been run on a Windows machine yet (see docs/RELIABILITY.md, "Windows").
# If Windows refuses to run scripts: powershell -ExecutionPolicy Bypass -File .\install.ps1
param(
    [switch]$Trainers,
    [switch]$LlmTrainers,
    [switch]$Tests,
    [switch]$Judges
)
$ErrorActionPreference = "Stop"
Set-Location -Path $PSScriptRoot
$Root = (Get-Location).Path

function Say([string]$Text) { Write-Host ""; Write-Host "== $Text" }
function Warn([string]$Text) { Write-Warning $Text }

# The python that builds .venv: $env:PYTHON, else the py launcher, else python on PATH.
if ($env:PYTHON) { $BasePython = @($env:PYTHON) }
elseif (Get-Command py -ErrorAction SilentlyContinue) { $BasePython = @("py", "-3") }
else { $BasePython = @("python") }
function Invoke-BasePython { & $BasePython[0] @($BasePython | Select-Object -Skip 1) @args }

$VenvPy = Join-Path $Root ".venv\Scripts\python.exe"

# --- 1. the app's virtualenv ---------------------------------------------------------------
Say "Python virtualenv (.venv)"
try { Invoke-BasePython -c "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)" }
catch { Write-Error "No Python found. Install Python 3.11 or newer from python.org (or set `$env:PYTHON)."; exit 1 }
if ($LASTEXITCODE -ne 0) { Write-Error "Bracket needs Python 3.11 or newer; set `$env:PYTHON to one."; exit 1 }
if (-not (Test-Path $VenvPy)) {
    Invoke-BasePython -m venv .venv
    if ($LASTEXITCODE -ne 0) { Write-Error "Could not create .venv with $($BasePython -join ' ')."; exit 1 }
} else {
    Write-Host ".venv exists; keeping it."
}

Say "Requirements (requirements.txt)"
$PipExtra = @()
if ($env:TORCH_INDEX_URL) { $PipExtra = @("--extra-index-url", $env:TORCH_INDEX_URL) }
& $VenvPy -m pip install --upgrade pip | Out-Null
& $VenvPy -m pip install @PipExtra -r requirements.txt
if ($LASTEXITCODE -ne 0) {
    Write-Error "pip could not install requirements.txt (see above). Check the network and run .\install.ps1 again."
    exit 1
}
# Bracket itself, in place: `python -m bracket` and `bracket` then work from any folder
& $VenvPy -m pip install --no-deps -e . | Out-Null
if ($LASTEXITCODE -ne 0) { Write-Warning "could not install Bracket into .venv in editable mode; run its commands from this folder" }
# Bracket's own bytecode, so the first `python app.py` does not compile bracket\ and ui\ (pip wrote the packages')
& $VenvPy -m compileall -q app.py bracket ui | Out-Null

# --- 2. settings ----------------------------------------------------------------------------
Say "Settings (.env)"
if (Test-Path .env) { Write-Host ".env exists; keeping it." }
elseif (Test-Path .env.example) {
    Copy-Item .env.example .env
    Write-Host "Wrote .env from .env.example; edit it to set model paths and folders."
}

# --- 3. the trainers (git submodules in vendor\) ---------------------------------------------
Say "Trainers (vendor\sd-scripts, vendor\musubi-tuner, vendor\ai-toolkit)"
if ((Get-Command git -ErrorAction SilentlyContinue) -and (Test-Path .git)) {
    & git submodule update --init --depth 1
    if ($LASTEXITCODE -eq 0) { Write-Host "vendor\ trainers are at their pinned commits." }
    else {
        Warn "could not fetch vendor\ (no network?). The CPU demo works without them; for the real trainers"
        Warn "run this later: git submodule update --init --depth 1"
    }
} else {
    Warn "not a git checkout (or no git): clone kohya-ss/sd-scripts, kohya-ss/musubi-tuner and ostris/ai-toolkit"
    Warn "into vendor\ yourself, or set BRACKET_SD_SCRIPTS_DIR / BRACKET_MUSUBI_DIR / BRACKET_AI_TOOLKIT_DIR in .env."
}

# --- 4. the demo dataset ----------------------------------------------------------------------
Say "Demo dataset"
try { $DemoDir = & $VenvPy -c "from bracket import settings; print(settings.get_settings().demo_data_dir)" 2>$null }
catch { $DemoDir = $null }
if (-not $DemoDir) { $DemoDir = "runs\demo-data" }
& $VenvPy -m bracket demo-data "$DemoDir"
if ($LASTEXITCODE -ne 0) {
    Warn "could not write the demo dataset; make it later with: .venv\Scripts\python.exe -m bracket demo-data $DemoDir"
}

# --- 5. optional: trainer virtualenvs ---------------------------------------------------------
# torch and torchvision must be one build: both from the same index (the PyTorch CPU wheels on a
# machine without nvidia-smi, falling back to PyPI when that index cannot be reached), then checked.
function Install-TrainerTorch([string]$Python, [string[]]$DefaultPackages = @("torch", "torchvision")) {
    $Packages = if ($env:TRAINER_TORCH) { $env:TRAINER_TORCH -split "\s+" } else { $DefaultPackages }
    $Index = $env:TRAINER_TORCH_INDEX_URL
    if (-not $Index -and (Get-Command nvidia-smi -ErrorAction SilentlyContinue)) {
        $Index = "https://download.pytorch.org/whl/cu128"
    }
    if ($Index) {
        & $Python -m pip install @Packages --index-url $Index | Out-Host
        if ($LASTEXITCODE -ne 0) { return $false }
    } else {
        & $Python -m pip install @Packages --index-url "https://download.pytorch.org/whl/cpu" | Out-Host
        if ($LASTEXITCODE -ne 0) {
            Warn "the PyTorch CPU index is not reachable; installing torch and torchvision from PyPI instead"
            & $Python -m pip install @Packages | Out-Host
            if ($LASTEXITCODE -ne 0) { return $false }
        }
    }
    $Loads = $true
    try { & $Python -c "import torch, torchvision.ops" 2>$null | Out-Null; $Loads = ($LASTEXITCODE -eq 0) }
    catch { $Loads = $false }
    if (-not $Loads) {
        Warn "torchvision does not load beside this torch (two builds mixed); reinstalling a matched pair from PyPI"
        & $Python -m pip install --force-reinstall @Packages | Out-Host
        if ($LASTEXITCODE -ne 0) { return $false }
    }
    return $true
}

function New-TrainerVenv([string]$Folder, [string[]]$InstallArgs, [string[]]$Torch = @("torch", "torchvision")) {
    $Python = Join-Path $Root "$Folder\.venv\Scripts\python.exe"
    if (-not (Test-Path $Python)) {
        Invoke-BasePython -m venv "$Folder\.venv" | Out-Host
        if ($LASTEXITCODE -ne 0) { Warn "could not create $Folder\.venv"; return }
    }
    & $Python -m pip install --upgrade pip | Out-Null
    if (-not (Install-TrainerTorch $Python $Torch)) { Warn "torch did not install into $Folder\.venv"; return }
    Push-Location $Folder
    try { & $Python -m pip install @InstallArgs | Out-Host } finally { Pop-Location }
    if ($LASTEXITCODE -ne 0) { Warn "the requirements of $Folder did not install; fix the error and run .\install.ps1 -Trainers again."; return }
    & $Python -m pip install tensorboard | Out-Null
    Write-Host "Trainer python: $Python"
}

# TRAINER_VENVS: which trainer venvs -Trainers makes (default all three)
$TrainerVenvs = if ($env:TRAINER_VENVS) { $env:TRAINER_VENVS -split "\s+" } else { @("sd-scripts", "musubi-tuner", "ai-toolkit") }
if ($Trainers) {
    Say "Trainer virtualenvs"
    if ($TrainerVenvs -contains "sd-scripts") {
        if (Test-Path vendor\sd-scripts\requirements.txt) { New-TrainerVenv "vendor\sd-scripts" @("-r", "requirements.txt") }
        else { Warn "vendor\sd-scripts is empty; run git submodule update --init --depth 1 first." }
    }
    if ($TrainerVenvs -contains "musubi-tuner") {
        if (Test-Path vendor\musubi-tuner\pyproject.toml) { New-TrainerVenv "vendor\musubi-tuner" @("-e", ".") }
        else { Warn "vendor\musubi-tuner is empty; run git submodule update --init --depth 1 first." }
    }
    if ($TrainerVenvs -contains "ai-toolkit") {
        # ai-toolkit's README installs torch, torchvision and torchaudio first, then requirements.txt
        if (Test-Path vendor\ai-toolkit\requirements.txt) {
            New-TrainerVenv "vendor\ai-toolkit" @("-r", "requirements.txt") @("torch", "torchvision", "torchaudio")
        }
        else { Warn "vendor\ai-toolkit is empty; run git submodule update --init --depth 1 first." }
    }
}

# --- 5b. optional: LLM trainer virtualenvs (Axolotl, torchtune, Unsloth) -----------------------
# One venv per trainer, inside the clone (vendor\<name>\.venv, ignored by git). torch goes in first
# at an exact version (LLM_TORCH) and every later install runs under a constraint file holding it,
# so no trainer package swaps it for another build. The pins are install.sh's (see the reasons
# there). Their authors support Linux first: if one does not install natively, use WSL.
$LlmTrainerPackages = [ordered]@{
    "axolotl"   = @("axolotl==0.19.0", "tensorboard")
    "torchtune" = @("torchtune==0.6.1", "torchao==0.11.*", "peft==0.18.*", "transformers", "bitsandbytes", "tensorboard")
    "unsloth"   = @("unsloth==2026.10.9", "tensorboard")
}

function New-LlmTrainerVenv([string]$Name, [string[]]$Packages) {
    $Folder = Join-Path $Root "vendor\$Name"
    $Python = Join-Path $Folder ".venv\Scripts\python.exe"
    $Constraints = Join-Path $Folder ".venv\bracket-torch-constraint.txt"
    $Started = Get-Date
    New-Item -ItemType Directory -Force -Path $Folder | Out-Null
    if (-not (Test-Path $Python)) {
        Invoke-BasePython -m venv (Join-Path $Folder ".venv") | Out-Host
        if ($LASTEXITCODE -ne 0) { Warn "could not create $Folder\.venv"; return $false }
    }
    & $Python -m pip install --upgrade pip | Out-Null
    $TorchArgs = @($(if ($env:LLM_TORCH) { $env:LLM_TORCH } else { "torch==2.13.0" }))
    if ($env:LLM_TORCH_INDEX_URL) { $TorchArgs += @("--extra-index-url", $env:LLM_TORCH_INDEX_URL) }
    & $Python -m pip install @TorchArgs | Out-Host
    if ($LASTEXITCODE -ne 0) { Warn "torch did not install into $Folder\.venv"; return $false }
    $Pin = & $Python -c "import torch; print('torch==' + torch.__version__)"
    if ($LASTEXITCODE -ne 0) { return $false }
    Set-Content -LiteralPath $Constraints -Value $Pin -Encoding ascii
    & $Python -m pip install -c $Constraints @Packages | Out-Host
    if ($LASTEXITCODE -ne 0) { Warn "the $Name packages did not install"; return $false }
    Write-Host "Trainer python: $Python ($([int]((Get-Date) - $Started).TotalSeconds) s)"
    return $true
}

if ($LlmTrainers) {
    Say "LLM trainer virtualenvs (vendor\axolotl, vendor\torchtune, vendor\unsloth)"
    $LlmFailed = $false
    foreach ($Name in $LlmTrainerPackages.Keys) {
        if (-not (New-LlmTrainerVenv $Name $LlmTrainerPackages[$Name])) { $LlmFailed = $true }
    }
    if ($LlmFailed) {
        Write-Error "An LLM trainer venv is incomplete (see above); fix it and run .\install.ps1 -LlmTrainers again."
        exit 1
    }
}

# --- 6. optional: what the browser and PostgreSQL tests need ----------------------------------
if ($Tests) {
    Say "Test dependencies"
    Write-Host "Browser tests: & $VenvPy -m playwright install chromium"
    Write-Host "PostgreSQL tests start a throwaway server from the Debian/Ubuntu postgresql package; on Windows"
    Write-Host "they are skipped (run them in WSL after ./install.sh --tests)."
}

# --- 7. optional: the image judges' models ---------------------------------------------------
if ($Judges) {
    Say "Image judges' models (Hugging Face cache, named in .env)"
    & $VenvPy -m bracket.judge.fetch_models (Join-Path $Root ".env")
    if ($LASTEXITCODE -ne 0) { Warn "fetching the judges' models failed; see above." }
}

Say "Done"
Write-Host "Start the app:   .venv\Scripts\python.exe app.py"
Write-Host "Or headless:     .venv\Scripts\python.exe -m bracket run --preset demo-cpu"
