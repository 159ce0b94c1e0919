"""docker-compose.yml: no Docker engine runs here, so its structure is tested, and docker-compose
validates it when installed (CI installs Debian's docker-compose)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))


def test_the_stack_has_every_service(compose):
    assert set(compose["services"]) == {"db", "redis", "web", "worker", "beat", "flower", "vllm", "gpu-worker",
                                        "judge-preset"}


@pytest.mark.parametrize("service", ["db", "redis", "web", "vllm"])
def test_stateful_and_serving_services_have_healthchecks(compose, service):
    check = compose["services"][service]["healthcheck"]
    assert check["test"] and check["interval"] and check["retries"] >= 10


def test_app_services_wait_for_healthy_database_and_redis(compose):
    for name in ("web", "worker", "beat", "gpu-worker", "judge-preset"):
        deps = compose["services"][name]["depends_on"]
        assert deps["db"]["condition"] == "service_healthy", name
        assert deps["redis"]["condition"] == "service_healthy", name
    assert compose["services"]["judge-preset"]["depends_on"]["vllm"]["condition"] == "service_healthy"


def test_web_migrates_then_serves_with_gunicorn(compose):
    command = compose["services"]["web"]["command"]
    assert command.index("migrate --noinput") < command.index("collectstatic") < command.index("gunicorn")


def test_workers_listen_on_their_queues(compose):
    assert "-Q default,llm" in compose["services"]["worker"]["command"]
    assert "-Q gpu" in compose["services"]["gpu-worker"]["command"]


def test_one_beat_queues_the_periodic_tasks(compose):
    assert compose["services"]["beat"]["command"].startswith("celery -A evalhub beat")
    assert "deploy" not in compose["services"]["beat"]  # no replicas: one beat, or every tick is queued twice


def test_flower_is_behind_a_password(compose):
    auth = compose["services"]["flower"]["environment"]["FLOWER_BASIC_AUTH"]
    assert "FLOWER_PASSWORD:?" in auth


def test_vllm_is_in_the_gpu_profile_with_an_nvidia_reservation_from_the_environment(compose):
    vllm = compose["services"]["vllm"]
    assert vllm["profiles"] == ["gpu"]
    device = vllm["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert "VLLM_GPU_COUNT" in str(device["count"])
    args = " ".join(vllm["command"])
    for variable in ("VLLM_MODEL", "VLLM_GPU_COUNT", "VLLM_GPU_MEMORY_FRACTION"):
        assert variable in args


def test_judge_preset_points_at_the_vllm_server(compose):
    command = compose["services"]["judge-preset"]["command"]
    assert "--backend openai-compatible" in command and "http://vllm:8000/v1" in command


def test_secrets_come_from_the_env_file_and_database_password_is_required(compose):
    for name in ("web", "worker"):
        assert compose["services"][name]["env_file"] == ".env"
    assert "POSTGRES_PASSWORD:?" in compose["services"]["db"]["environment"]["POSTGRES_PASSWORD"]


def test_every_compose_variable_is_documented_in_env_example():
    import re

    text = (REPO / "docker-compose.yml").read_text(encoding="utf-8")
    documented = (REPO / ".env.example").read_text(encoding="utf-8")
    for variable in sorted(set(re.findall(r"\$\{([A-Z_]+)", text))):
        assert f"\n{variable}=" in documented, variable


def test_docker_compose_config_validates(tmp_path):
    binary = shutil.which("docker-compose")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("docker-compose is missing: .ci/run installs Debian's docker-compose")
        pytest.skip("docker-compose is not installed")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "docker-compose.yml", project / "docker-compose.yml")
    env = (REPO / ".env.example").read_text(encoding="utf-8")
    (project / ".env").write_text(env, encoding="utf-8")
    for profile in ([], ["--profile", "gpu"]):
        result = subprocess.run([binary, *profile, "config", "-q"], cwd=project, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stderr
