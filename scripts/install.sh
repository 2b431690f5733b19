#!/usr/bin/env bash
# Install everything the test suite needs, idempotently: the native tools with apt-get
# (root: run as root or through sudo), then this checkout with its test extra with pip
# (no root in a venv). Packages already installed are left as they are.
#
# Without root, or without apt-get, the native tools are reported and skipped: the tests
# that need them are skipped too, naming this script. Under CI=true a native tool that
# cannot be installed is an error, as it is in the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# C/C++ compilers for the kernel library and the ABI tests; upstream MLIR and clang 22 for
# the compiled path (rewriter.compile); valgrind for the leak tests; git and binutils (nm)
# for the packaging, pre-commit and symbol tests; llvm-22 (llvm-objcopy, llvm-ar) for static
# libraries; the system's OpenBLAS, the BLAS a compiled model links by default; Debian's
# cross compilers for aarch64 and qemu's user-mode emulator for the cross-compilation test;
# cmake for samples/deploy; Open MPI (mpicc, and mpirun's runtime) for mpi4jax, which pip
# builds from source (the mpi extra below).
APT_PACKAGES=(gcc g++ binutils git mlir-22-tools clang-22 llvm-22 valgrind libopenblas-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user cmake libopenmpi-dev openmpi-bin)

missing=()
for package in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" \
        || missing+=("$package")
done

not_installed() {
    echo "scripts/install.sh: cannot install ${missing[*]}: $1" >&2
    echo "  run as root: apt-get install ${missing[*]}" >&2
    if [ "${CI:-}" = "true" ]; then
        exit 1
    fi
    echo "  continuing without them: the tests that need them are skipped" >&2
}

# Installs "${missing[@]}" with apt-get, through sudo when not root; "$@" goes to
# apt-get install. With FOREIGN_ARCH set, that architecture is added to dpkg first.
apt_install() {
    if ! command -v apt-get >/dev/null; then
        not_installed "apt-get not found"
        return
    fi
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    if [ ${#sudo[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
        not_installed "not root and sudo not found"
        return
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! { { [ -z "${FOREIGN_ARCH:-}" ] || "${sudo[@]}" dpkg --add-architecture "$FOREIGN_ARCH"; } \
        && "${sudo[@]}" apt-get update -qq \
        && "${sudo[@]}" apt-get install -y -qq "$@" "${missing[@]}" >/dev/null; }; then
        not_installed "apt-get failed"
    fi
}

if [ ${#missing[@]} -gt 0 ]; then
    apt_install
fi

# The aarch64 OpenBLAS (Debian's arm64 architecture beside this one), for the test that
# cross-compiles a model with matrix products: the compile links the target's OpenBLAS by
# its soname, and the program runs with it under qemu-aarch64.
ARM64_PACKAGES=(libopenblas0-pthread:arm64)
if [ "$(dpkg --print-architecture 2>/dev/null)" = "amd64" ] \
    && ! dpkg-query -W -f='${Status}' "${ARM64_PACKAGES[@]}" 2>/dev/null | grep -q "ok installed"; then
    missing=("${ARM64_PACKAGES[@]}")
    FOREIGN_ARCH=arm64 apt_install --no-install-recommends
fi

python="${PYTHON:-$(command -v python || command -v python3)}"
# The mpi extra (mpi4jax, tests/test_third_party.py) has no wheel: pip builds it with
# mpicc, so it is installed with the test extra where Open MPI is; without it its tests are
# skipped, naming the install. Its build also compiles a CUDA extension wherever it finds
# nvcc, and fails without the whole CUDA toolkit ("cuda_runtime.h: No such file or
# directory"): CUDA_PATH names an empty folder, so that it builds for the CPU alone. pip
# keeps the wheel it builds, and installs nothing already installed.
extras=test
if command -v mpicc >/dev/null; then
    extras=test,mpi
fi
no_cuda="$(mktemp -d)"
trap 'rmdir "$no_cuda"' EXIT
CUDA_PATH="$no_cuda" "$python" -m pip install --quiet --disable-pip-version-check ".[$extras]"
