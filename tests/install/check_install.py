#!/usr/bin/env python3
"""What `cmake --install` and `cpack -G DEB` deliver, and what the binary links.

    check_install.py install SETTINGS.json   install the build to a temp prefix, run the installed
        binary, import the installed module, configure and build a consumer of find_package(roofline)
        (tests/install/consumer) and run it
    check_install.py deb SETTINGS.json       make the .deb, list it with dpkg-deb -c, unpack it
        with dpkg-deb -x and run the unpacked binary
    check_install.py needed BINARY           the binary's ELF NEEDED list holds libc, libstdc++
        and libfmt (and libm, libgcc_s, the loader) and nothing else: no MPI

SETTINGS.json (tests/install/CMakeLists.txt) names the build, its tools and compiler, and
python_dir: where the Python package goes under the prefix, "" where the build has no module.
Exit status 0 when every check holds; each failure is printed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(*words, **kwargs):
    done = subprocess.run([str(w) for w in words], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, words))} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def check_tree(root, python_dir, where):
    """The files every install holds, under `root` (a prefix or an unpacked /usr)."""
    check((root / "bin/roofline").is_file(), f"{where}: bin/roofline")
    data = root / "share/roofline"
    for path in ["schema/llm.v1.schema.json", "schema/plan.v1.schema.json", "hardware/h100-sxm.json",
                 "hardware/schema.json", "models/llama-3.1-70b.json", "models/schema.json",
                 "calibrations/h200-sxm.json", "calibrations/transfer/bands.json"]:
        check((data / path).is_file(), f"{where}: share/roofline/{path}")
    source = Path(__file__).resolve().parents[2]
    for folder in ["hardware", "models", "calibrations"]:
        expected = sorted(p.relative_to(source / folder) for p in (source / folder).rglob("*.json"))
        installed = sorted(p.relative_to(data / folder) for p in (data / folder).rglob("*.json"))
        check(installed == expected, f"{where}: share/roofline/{folder} holds {folder}/ ({len(installed)} files)")
    if python_dir:
        package = root / python_dir / "roofline"
        check((package / "__init__.py").is_file(), f"{where}: {python_dir}/roofline/__init__.py")
        check(len(list(package.glob("_roofline*.so"))) == 1, f"{where}: {python_dir}/roofline/_roofline*.so")


def check_binary(binary, where):
    """The installed binary runs the main job's capacity report from its embedded data."""
    report = json.loads(run(binary, "llm", "--model", "llama-3.1-70b", "--gpu", "h100", "--tp", "8", "--weights",
                            "fp8", "--context", "8192", "--format", "json"))
    check(report["schema"] == "roofline.llm.v1", f"{where}: roofline llm runs ({report['schema']})")


def install(settings_path):
    settings = json.loads(Path(settings_path).read_text())
    python_dir = settings["python_dir"]
    with tempfile.TemporaryDirectory(prefix="roofline-install-") as temp:
        prefix = Path(temp) / "prefix"
        run(settings["cmake"], "--install", settings["build"], "--prefix", prefix)
        check_tree(prefix, python_dir, "install")
        check_binary(prefix / "bin/roofline", "install")
        if python_dir:
            # The installed module, not the build tree's: only the prefix on PYTHONPATH.
            environment = dict(os.environ, PYTHONPATH=str(prefix / python_dir), PYTHONDONTWRITEBYTECODE="1")
            ridge = run(sys.executable, "-c",
                        "import roofline; r = roofline.ridge(gpu='h100', dtype='bf16'); "
                        "print(roofline.__file__); print(r['results']['ridge'][0]['ridge_flop_per_byte'])",
                        env=environment, cwd=temp).split()
            check(ridge[0].startswith(str(prefix)), f"install: the module imported from the prefix ({ridge[0]})")
            # 989.4 TFLOP/s / 3.35 TB/s (hardware/h100-sxm.json)
            check(abs(float(ridge[1]) - 989.4 / 3.35) < 1e-9, f"install: roofline.ridge from Python ({ridge[1]})")

        consumer_build = Path(temp) / "consumer"
        run(settings["cmake"], "-S", settings["consumer_source"], "-B", consumer_build,
            f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_CXX_COMPILER={settings['cxx_compiler']}",
            f"-DCMAKE_CXX_COMPILER_LAUNCHER={settings['launcher']}", "-DCMAKE_BUILD_TYPE=Release")
        run(settings["cmake"], "--build", consumer_build)
        lines = run(consumer_build / "consumer").splitlines()
        # int4_g128: 4 bits + a 16-bit scale per 128 elements (no zero point) = (4 + 16/128) / 8 B
        check(lines[0] == "int4_g128 0.515625", f"consumer: format ({lines[0]})")
        # 989.4e12 / 3.35e12 = 295.343 FLOP/B (std::cout's 6 significant digits)
        check(lines[1] == "ridge 295.343", f"consumer: ridge ({lines[1]})")
        check(lines[2] == f"version {settings['version']}", f"consumer: version.hpp ({lines[2]})")
        check(lines[3].startswith("error --dtype: "), f"consumer: InputError ({lines[3]})")


def deb(settings_path):
    settings = json.loads(Path(settings_path).read_text())
    python_dir = settings["python_dir"]
    with tempfile.TemporaryDirectory(prefix="roofline-deb-") as temp:
        run(settings["cpack"], "-G", "DEB", "-B", temp, "--config", Path(settings["build"]) / "CPackConfig.cmake")
        packages = list(Path(temp).glob("roofline_*.deb"))
        check(len(packages) == 1, f"deb: one roofline_*.deb ({packages})")
        if not packages:
            return
        package = packages[0]
        listing = run("dpkg-deb", "-c", package)
        for path in ["./usr/bin/roofline", "./usr/share/roofline/schema/llm.v1.schema.json",
                     "./usr/share/roofline/hardware/h100-sxm.json", "./usr/share/roofline/models/llama-3.1-70b.json",
                     "./usr/share/roofline/calibrations/h200-sxm.json", "./usr/lib/cmake/roofline/rooflineConfig.cmake",
                     "./usr/include/roofline/core/dtype.hpp"]:
            check(re.search(rf" {re.escape(path)}$", listing, re.M) is not None, f"deb: lists {path}")
        if python_dir:
            check(f"./usr/{python_dir}/roofline/__init__.py" in listing, f"deb: lists {python_dir}/roofline")
        depends = run("dpkg-deb", "-f", package, "Depends")
        for library in ["libc6", "libstdc++6", "libfmt9"]:
            check(library in depends, f"deb: Depends names {library} ({depends.strip()})")
        # MPI is linked only in CUDA builds that found it (cmake/Mpi.cmake): a host-only package needs none.
        if settings["links_mpi"] != "ON":
            check("mpi" not in depends, f"deb: Depends names no MPI ({depends.strip()})")
        unpacked = Path(temp) / "unpacked"
        run("dpkg-deb", "-x", package, unpacked)
        check_tree(unpacked / "usr", python_dir, "deb")
        check_binary(unpacked / "usr/bin/roofline", "deb")


def needed(binary):
    dynamic = run("readelf", "--dynamic", binary)
    libraries = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    # ld-linux (glibc's loader) is named where thread-local storage of position-independent code
    # needs __tls_get_addr.
    names = {re.sub(r"\.so(\.\d+)*$", "", library) for library in libraries}
    check({"libc", "libstdc++", "libfmt"} <= names, f"needed: libc, libstdc++ and libfmt ({libraries})")
    allowed = {"libc", "libstdc++", "libfmt", "libm", "libgcc_s", "ld-linux-x86-64"}
    check(names <= allowed, f"needed: nothing else ({libraries})")
    check(not any("mpi" in library for library in libraries), f"needed: no MPI ({libraries})")


def main():
    mode, arguments = sys.argv[1], sys.argv[2:]
    {"install": install, "deb": deb, "needed": needed}[mode](*arguments)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
