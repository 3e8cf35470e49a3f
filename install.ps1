# Bracket set-up for Windows (PowerShell): one idempotent script, the twin of install.sh.
#
#   .\install.ps1              app venv (.venv) + requirements, .env, vendor\ trainers, demo dataset
#   .\install.ps1 -Trainers    also the trainer virtualenvs of vendor\sd-scripts and vendor\musubi-tuner
#   .\install.ps1 -Tests       also says what the browser and PostgreSQL tests need
#
# Variables: PYTHON (python to build .venv with, default "py -3" or python), TORCH_INDEX_URL
# (extra pip index for torch in .venv), TRAINER_TORCH (torch packages of the trainer venvs,
# default "torch torchvision"), TRAINER_TORCH_INDEX_URL (their index; default CUDA 12.8 wheels
# when nvidia-smi exists, else the CPU wheels).
param(
    [switch]$Trainers,
    [switch]$Tests
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

# --- 2. settings ----------------------------------------------------------------------------
Say "Settings (.env)"
if (Test-Path .env) { Write-Host ".env exists; keeping it." }
elseif (Test-Path .env.example) {
    Copy-Item .env.example .env
    Write-Host "Wrote .env from .env.example; edit it to set model paths and folders."
}

# --- 3. the trainers (git submodules in vendor\) ---------------------------------------------
Say "Trainers (vendor\sd-scripts, vendor\musubi-tuner)"
if ((Get-Command git -ErrorAction SilentlyContinue) -and (Test-Path .git)) {
    & git submodule update --init --depth 1
    if ($LASTEXITCODE -eq 0) { Write-Host "vendor\ trainers are at their pinned commits." }
    else {
        Warn "could not fetch vendor\ (no network?). The CPU demo works without them; for the real trainers"
        Warn "run this later: git submodule update --init --depth 1"
    }
} else {
    Warn "not a git checkout (or no git): clone kohya-ss/sd-scripts and kohya-ss/musubi-tuner into vendor\"
    Warn "yourself, or set BRACKET_SD_SCRIPTS_DIR / BRACKET_MUSUBI_DIR in .env."
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
function New-TrainerVenv([string]$Folder, [string[]]$InstallArgs) {
    $Python = Join-Path $Root "$Folder\.venv\Scripts\python.exe"
    if (-not (Test-Path $Python)) {
        Invoke-BasePython -m venv "$Folder\.venv"
        if ($LASTEXITCODE -ne 0) { Warn "could not create $Folder\.venv"; return }
    }
    & $Python -m pip install --upgrade pip | Out-Null
    $Index = $env:TRAINER_TORCH_INDEX_URL
    if (-not $Index) {
        if (Get-Command nvidia-smi -ErrorAction SilentlyContinue) { $Index = "https://download.pytorch.org/whl/cu128" }
        else { $Index = "https://download.pytorch.org/whl/cpu" }
    }
    $TorchPackages = if ($env:TRAINER_TORCH) { $env:TRAINER_TORCH -split "\s+" } else { @("torch", "torchvision") }
    & $Python -m pip install @TorchPackages --index-url $Index
    if ($LASTEXITCODE -ne 0) { Warn "torch did not install into $Folder\.venv"; return }
    Push-Location $Folder
    try { & $Python -m pip install @InstallArgs } finally { Pop-Location }
    if ($LASTEXITCODE -ne 0) { Warn "the requirements of $Folder did not install; fix the error and run .\install.ps1 -Trainers again."; return }
    & $Python -m pip install tensorboard | Out-Null
    Write-Host "Trainer python: $Python"
}

if ($Trainers) {
    Say "Trainer virtualenvs"
    if (Test-Path vendor\sd-scripts\requirements.txt) { New-TrainerVenv "vendor\sd-scripts" @("-r", "requirements.txt") }
    else { Warn "vendor\sd-scripts is empty; run git submodule update --init --depth 1 first." }
    if (Test-Path vendor\musubi-tuner\pyproject.toml) { New-TrainerVenv "vendor\musubi-tuner" @("-e", ".") }
    else { Warn "vendor\musubi-tuner is empty; run git submodule update --init --depth 1 first." }
}

# --- 6. optional: what the browser and PostgreSQL tests need ----------------------------------
if ($Tests) {
    Say "Test dependencies"
    Write-Host "Browser tests: & $VenvPy -m playwright install chromium"
    Write-Host "PostgreSQL tests start a throwaway server from the Debian/Ubuntu postgresql package; on Windows"
    Write-Host "they are skipped (run them in WSL after ./install.sh --tests)."
}

Say "Done"
Write-Host "Start the app:   .venv\Scripts\python.exe app.py"
Write-Host "Or headless:     .venv\Scripts\python.exe -m bracket run --preset demo-cpu --budget 4"
