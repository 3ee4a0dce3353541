"""Kernel settings known to cost performance: recorded /proc and /sys trees -> warnings with reasons."""
import pytest

from yeebench import kernel_settings
from yeebench.checks.acceptance import nodecheck


def fake_tree(tmp_path, aslr="2", thp="always [madvise] never", governor=None, reclaim="0",
              numa_balancing="0", vendor="AuthenticAMD", family=25, hugepages=0):
    files = {
        "proc/sys/kernel/randomize_va_space": aslr,
        "proc/sys/kernel/numa_balancing": numa_balancing,
        "proc/sys/vm/zone_reclaim_mode": reclaim,
        "sys/kernel/mm/transparent_hugepage/enabled": thp,
        "sys/kernel/mm/transparent_hugepage/defrag": "madvise",
        "proc/meminfo": f"HugePages_Total:   {hugepages}\nHugePages_Free:    {hugepages}\nHugepagesize:   2048 kB\n",
        "proc/cpuinfo": f"vendor_id\t: {vendor}\ncpu family\t: {family}\n",
    }
    if governor:
        files["sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] = governor
    for rel, text in files.items():
        if text is None:
            continue
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return str(tmp_path)


def by_setting(findings):
    return {f["setting"]: f for f in findings}


def test_paper_003_aslr_case_is_a_warning(tmp_path):
    root = fake_tree(tmp_path, family=0x15)
    found = by_setting(kernel_settings.assess(kernel_settings.collect(root, kernel_release="2.6.32-131")))
    aslr = found["kernel.randomize_va_space"]
    assert aslr["level"] == "warning" and "12 threads" in aslr["reason"]


def test_aslr_on_modern_kernel_is_only_a_note(tmp_path):
    root = fake_tree(tmp_path, family=0x15)
    found = by_setting(kernel_settings.assess(kernel_settings.collect(root, kernel_release="6.1.0")))
    assert found["kernel.randomize_va_space"]["level"] == "note"


def test_aslr_off_gives_no_finding(tmp_path):
    root = fake_tree(tmp_path, aslr="0", family=0x15)
    found = by_setting(kernel_settings.assess(kernel_settings.collect(root, kernel_release="2.6.32")))
    assert "kernel.randomize_va_space" not in found


@pytest.mark.parametrize("kw, setting, level", [
    ({"thp": "always madvise [never]"}, "transparent_hugepage.enabled", "warning"),
    ({"governor": "powersave"}, "cpufreq.governors", "warning"),
    ({"reclaim": "1"}, "vm.zone_reclaim_mode", "warning"),
    ({"numa_balancing": "1"}, "kernel.numa_balancing", "note"),
    ({"hugepages": 512}, "HugePages_Total", "note"),
])
def test_costly_settings_are_reported_with_reasons(tmp_path, kw, setting, level):
    found = by_setting(kernel_settings.assess(kernel_settings.collect(fake_tree(tmp_path, **kw), "6.1")))
    assert found[setting]["level"] == level and found[setting]["reason"]


def test_performance_governor_and_default_thp_are_quiet(tmp_path):
    found = by_setting(kernel_settings.assess(
        kernel_settings.collect(fake_tree(tmp_path, governor="performance"), "6.1")))
    assert "cpufreq.governors" not in found and "transparent_hugepage.enabled" not in found


def test_unreadable_settings_are_noted_not_guessed(tmp_path):
    settings = kernel_settings.collect(str(tmp_path / "empty"), kernel_release="6.1")
    assert settings["kernel.randomize_va_space"] is None
    found = by_setting(kernel_settings.assess(settings))
    assert "not readable" in found["kernel.randomize_va_space"]["reason"]
    assert found["cpufreq.governors"]["level"] == "note"


def test_nodes_disagreeing_on_a_setting_fail(tmp_path):
    a = kernel_settings.collect(fake_tree(tmp_path / "a"), "6.1")
    b = kernel_settings.collect(fake_tree(tmp_path / "b", aslr="0"), "6.1")
    ok, reason, _ = nodecheck.settings_verdict({"n1": {"settings": a}, "n2": {"settings": b}})
    assert not ok and "kernel.randomize_va_space differs between nodes: 0 on n2; 2 on n1" in reason
    ok, reason, findings = nodecheck.settings_verdict({"n1": {"settings": a}, "n2": {"settings": dict(a)}})
    assert ok and findings and all(f["host"] in ("n1", "n2") for f in findings)
