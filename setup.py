"""Builds the Python module `stg` with CMake (the target stg_python) and
installs it; pyproject.toml names this file's setuptools as the backend."""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):
    """Configures the checkout into build_temp and builds the module there."""

    def build_extension(self, ext):
        source = os.path.dirname(os.path.abspath(__file__))
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        if shutil.which("ccache"):
            generator.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.run(["cmake", "-S", source, "-B", build, *generator,
                        "-DCMAKE_BUILD_TYPE=Release", "-DSTG_BUILD_TESTS=OFF",
                        "-DSTG_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable],
                       check=True)
        subprocess.run(["cmake", "--build", build, "--target", "stg_python",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = [f for f in os.listdir(build) if f.startswith("stg.") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError("the CMake build made no single stg module: %s" % built)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(build, built[0]), target)


setup(ext_modules=[Extension("stg", sources=[])], cmdclass={"build_ext": CMakeBuild})
