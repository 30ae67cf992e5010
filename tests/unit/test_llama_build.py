"""How llama.cpp is built for a CPU (models/llama/build.py): the flags named per instruction
set, AMX never, the fallbacks, the reuse key, and what a crash tells the user."""

from __future__ import annotations

import signal
import sys

from models.llama.build import Cpu, cpu_builds, crash_advice, cause_line, rebuild_command

SAPPHIRE = frozenset("avx avx2 fma f16c bmi2 avx512f avx512vbmi avx512_vnni avx512_bf16 "
                     "avx_vnni amx_tile amx_int8 amx_bf16".split())


def test_reads_flags_and_model_from_cpuinfo(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRAGE_CPU_MACHINE", "x86_64")
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Xeon 8480+\nflags\t\t: avx avx2 amx_tile\n"
                    "processor\t: 1\nmodel name\t: Xeon 8480+\nflags\t\t: avx avx2 amx_tile\n")
    cpu = Cpu.read(info)
    assert cpu == Cpu("x86_64", "Xeon 8480+", frozenset({"avx", "avx2", "amx_tile"}))
    assert cpu.has_amx and cpu.x86
    assert Cpu.read(tmp_path / "missing").flags == frozenset()


def test_an_amx_cpu_gets_every_isa_by_name_and_amx_off_then_avx2():
    best, fallback = cpu_builds(Cpu("x86_64", "", SAPPHIRE))
    assert best.what == "CPU, AVX-512 (VBMI, VNNI, BF16) without AMX"
    args = best.cmake_args.split()
    assert args[0] == "-DGGML_NATIVE=OFF"
    assert {"-DGGML_AVX512=ON", "-DGGML_AVX512_BF16=ON", "-DGGML_AVX_VNNI=ON", "-DGGML_FMA=ON",
            "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"} <= set(args)
    assert fallback.kind == "cpu-baseline"
    assert "-DGGML_AVX512=OFF" in fallback.cmake_args and "-DGGML_AVX2=ON" in fallback.cmake_args
    assert fallback.what == "CPU, AVX2 (AVX-VNNI) without AVX-512 or AMX"


def test_an_old_cpu_has_its_missing_isas_turned_off_not_left_to_defaults():
    """With GGML_NATIVE=OFF llama.cpp turns AVX/AVX2/FMA/F16C/BMI2 on by default: a CPU
    without them would die by SIGILL, so each is named OFF."""
    (only,) = cpu_builds(Cpu("x86_64", "", frozenset({"sse4_2", "avx"})))
    assert only.what == "CPU, AVX"
    assert {"-DGGML_AVX=ON", "-DGGML_AVX2=OFF", "-DGGML_FMA=OFF", "-DGGML_F16C=OFF",
            "-DGGML_BMI2=OFF"} <= set(only.cmake_args.split())


def test_arm_keeps_the_native_build_and_falls_back_to_the_portable_one():
    native, portable = cpu_builds(Cpu("aarch64", "", frozenset({"asimd", "sve"})))
    assert native.cmake_args == "" and portable.cmake_args == "-DGGML_NATIVE=OFF"


def test_the_reuse_key_holds_the_flags_the_cpu_and_python():
    cpu = Cpu("x86_64", "", SAPPHIRE)
    best, fallback = cpu_builds(cpu)
    key = best.key(cpu, "3.11.7", "llama-cpp-python==0.3.36")
    assert key == best.key(Cpu("x86_64", "other name", SAPPHIRE), "3.11.7",
                           "llama-cpp-python==0.3.36")
    assert len({key, fallback.key(cpu, "3.11.7", "llama-cpp-python==0.3.36"),
                best.key(Cpu("x86_64", "", SAPPHIRE - {"amx_bf16"}), "3.11.7",
                         "llama-cpp-python==0.3.36"),
                best.key(cpu, "3.12.3", "llama-cpp-python==0.3.36"),
                best.key(cpu, "3.11.7", "sha256:abc")}) == 5


def test_the_cause_line_prefers_amx_then_errors():
    log = ("llama_model_loader: loaded meta data\nload_tensors: AMX model buffer size = 95 MiB\n"
           "amx repack tensor blk.0.attn_q.weight of type q4_1\nllama_context: n_ctx = 256\n")
    assert cause_line(log) == "amx repack tensor blk.0.attn_q.weight of type q4_1"
    assert cause_line("a\nGGML_ASSERT(x) failed\nb") == "GGML_ASSERT(x) failed"
    assert cause_line("nothing here\n") is None


def test_crash_advice_only_for_a_crash_signal():
    advice = crash_advice(-signal.SIGILL, "amx_int8 tile\n", "/v")
    assert advice == ("llama.cpp crashed in native code (SIGILL); the log says: 'amx_int8 "
                      f"tile'. Rebuild it with safe flags: {rebuild_command('/v')}")
    assert rebuild_command("/v").endswith("scripts/setup.sh --llama-safe /v")
    assert rebuild_command().endswith(f" --llama-safe {sys.prefix}")
    for returncode in (-signal.SIGKILL, -signal.SIGTERM, 0, 3, None):
        assert crash_advice(returncode, "amx\n") == ""
