"""The PEP 517 build backend of the Python module `stg` (pyproject.toml names
it): `pip install .` with any CPython 3.9+ builds the module with CMake (the
target stg_python) and installs it as a wheel.

Why a backend of our own rather than setuptools: setuptools before 70.1
needs the separate `wheel` package to build a wheel, and the venvs of
pyenv's, conda's or python.org's interpreters have neither a newer
setuptools nor `wheel` when the package index cannot be reached. This
backend needs nothing but the standard library and CMake, so pip's isolated
build environment is empty and the install works offline. A wheel is a zip
file with three metadata files (PEP 427, PEP 376 RECORD), written here with
zipfile.

pybind11: the system's (Debian's pybind11-dev, found by CMake) when there is
one; otherwise get_requires_for_build_wheel asks pip for the pybind11 package
of the package index, whose CMake directory is then given to the build.

Build directory: the checkout's build/ (scripts/build.sh's) when it is
configured for an interpreter with this one's extension suffix (the module
is the same file for both), so that a checkout already built installs in
seconds; otherwise build/python-<suffix tag>/ of its own.
"""

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

NAME = "stg"
SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _version():
    """The project's version, STG_VERSION of the top-level CMakeLists.txt."""
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("set(STG_VERSION "):
                return line.split('"')[1]
    raise RuntimeError("CMakeLists.txt sets no STG_VERSION")


def _ext_suffix(python=None):
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        return sysconfig.get_config_var("EXT_SUFFIX")
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def _system_pybind11():
    """True when CMake finds a pybind11 package of the system's."""
    for prefix in ("/usr/lib/cmake/pybind11", "/usr/share/cmake/pybind11",
                   "/usr/local/lib/cmake/pybind11", "/usr/local/share/cmake/pybind11"):
        if os.path.exists(os.path.join(prefix, "pybind11Config.cmake")):
            return True
    return False


def _cached(build, key):
    """The value of `key` in build/CMakeCache.txt, or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def _build_directory():
    shared = os.path.join(SOURCE, "build")
    # FindPython3 keeps the interpreter it found as _Python3_EXECUTABLE.
    cached_python = _cached(shared, "Python3_EXECUTABLE") or _cached(shared, "_Python3_EXECUTABLE")
    if (_cached(shared, "STG_PYTHON") in ("ON", "1", "TRUE") and cached_python
            and _ext_suffix(cached_python) == _ext_suffix()):
        return shared, False
    tag = _ext_suffix().strip(".").replace(".so", "").replace(".pyd", "")
    return os.path.join(SOURCE, "build", "python-" + tag), True


def _build_module():
    """Builds the module; returns the path of the built file."""
    build, own = _build_directory()
    configure = ["cmake", "-S", SOURCE, "-B", build]
    if own:
        configure += ["-DCMAKE_BUILD_TYPE=Release", "-DSTG_BUILD_TESTS=OFF", "-DSTG_PYTHON=ON",
                      "-DPython3_EXECUTABLE=" + sys.executable]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        if not _system_pybind11():
            import pybind11  # the build requirement pip installed

            configure.append("-Dpybind11_DIR=" + pybind11.get_cmake_dir())
    if own or not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", build, "--target", "stg_python", "-j",
                    str(os.cpu_count() or 1)], check=True)
    module = os.path.join(build, NAME + _ext_suffix())
    if not os.path.exists(module):
        raise RuntimeError("the CMake build left no %s" % module)
    return module


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    abi = impl + (getattr(sys, "abiflags", "") or "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, abi, platform)


def _metadata(version):
    summary = "Synthetic distributed-training workloads as Chakra execution traces for ASTRA-sim"
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n"
            "Requires-Python: >=3.9\nProvides-Extra: plot\n"
            "Requires-Dist: matplotlib; extra == \"plot\"\n" % (NAME, version, summary))


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return [] if _system_pybind11() else ["pybind11>=2.6"]


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    module = _build_module()
    dist_info = "%s-%s.dist-info" % (NAME, version)
    wheel_name = "%s-%s-%s.whl" % (NAME, version, _tag())
    files = [
        (NAME + _ext_suffix(), open(module, "rb").read()),
        (dist_info + "/METADATA", _metadata(version).encode()),
        (dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: stg_build_backend\n"
                                "Root-Is-Purelib: false\nTag: %s\n" % _tag()).encode()),
    ]
    os.makedirs(wheel_directory, exist_ok=True)
    record = "".join(_record_line(n, d) for n, d in files) + dist_info + "/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        for name, data in files:
            whl.writestr(name, data)
        whl.writestr(dist_info + "/RECORD", record)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    """The checkout's tracked files (git ls-files) as NAME-VERSION.tar.gz."""
    version = _version()
    listed = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z"], stdout=subprocess.PIPE,
                            check=True).stdout.decode().split("\0")
    base = "%s-%s" % (NAME, version)
    os.makedirs(sdist_directory, exist_ok=True)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for path in filter(None, listed):
            tar.add(os.path.join(SOURCE, path), arcname=base + "/" + path, recursive=False)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = _metadata(version).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
