"""Who and where: project, zone, account and credentials, found the way gcloud finds them.

Order: flags, then ``CLOUDSDK_CORE_PROJECT`` / ``CLOUDSDK_COMPUTE_ZONE``, then gcloud's active
configuration file, then ``GOOGLE_CLOUD_PROJECT`` and the legacy ``GCLOUD_PROJECT`` (read by
google-auth, not gcloud).
Credential detection only looks at files and the environment: it never probes the GCE metadata
server (a 3 s wait when nothing is there) unless the machine says it is a Google VM.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core import untrusted
from tpuwizard.core.cloud.names import is_project_id, is_resource_name, is_zone
from tpuwizard.core.errors import BadInput, shown

DMI_PRODUCT = Path("/sys/class/dmi/id/product_name")
MAX_CONFIG_BYTES = 64 * untrusted.KIB  # gcloud's configuration: a few short properties
CONFIGURATION_RE = re.compile(r"[a-z][-a-z0-9]*")


@dataclass
class GcloudContext:
    """Who and where, as gcloud would find them, and what is missing for a real launch."""

    project: str | None = None
    project_source: str | None = None
    zone: str | None = None
    zone_source: str | None = None
    account: str | None = None
    credentials: str | None = None  # where ADC come from, or None
    config_dir: Path | None = None
    configuration: str = "default"
    problems: list[tuple[str, str]] = field(default_factory=list)  # (what is missing, command)

    @property
    def ready(self) -> bool:
        return not self.problems


def config_dir(env: Mapping[str, str] | None = None, windows: bool | None = None) -> Path:
    env = os.environ if env is None else env
    windows = os.name == "nt" if windows is None else windows
    if env.get("CLOUDSDK_CONFIG"):
        return Path(env["CLOUDSDK_CONFIG"]).expanduser()
    if windows and env.get("APPDATA"):  # gcloud on Windows: %APPDATA%\gcloud
        return Path(env["APPDATA"]) / "gcloud"
    return Path(env.get("HOME", str(Path.home()))) / ".config" / "gcloud"


def active_configuration(cfg_dir: Path, env: Mapping[str, str]) -> str:
    if env.get("CLOUDSDK_ACTIVE_CONFIG_NAME"):
        return env["CLOUDSDK_ACTIVE_CONFIG_NAME"]
    try:  # untrusted input (core/untrusted.py): a FIFO here would hang every command
        name = untrusted.read_text(cfg_dir / "active_config", MAX_CONFIG_BYTES).strip()
    except (OSError, ValueError):
        name = ""
    # gcloud's own names: a letter, then letters, digits and hyphens. Anything else ('../x')
    # names no configuration file of gcloud's.
    return name if CONFIGURATION_RE.fullmatch(name) else "default"


def read_properties(cfg_dir: Path, configuration: str) -> dict[str, dict[str, str]]:
    path = cfg_dir / "configurations" / f"config_{configuration}"
    if not path.is_file():
        return {}  # no gcloud yet: the parser is not even imported (the wizard starts sooner)
    try:  # read as untrusted input: a regular file, bounded, UTF-8 as gcloud writes it
        text = untrusted.read_text(path, MAX_CONFIG_BYTES)
    except (OSError, ValueError):
        return {}
    import configparser

    # gcloud's files are INI without interpolation: a '%' (a proxy password) must not crash.
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, str(path))
    except configparser.Error:
        return {}
    return {section: dict(parser[section]) for section in parser.sections()}


def on_google_vm() -> bool:
    """The machine says it is a Google VM (DMI product name); no network probe."""
    try:
        return "Google" in untrusted.read_small(DMI_PRODUCT, 4096).decode("utf-8", "replace")
    except OSError:
        return False


def find_credentials(env: Mapping[str, str] | None = None) -> str | None:
    """Where Application Default Credentials would come from, without loading or probing them."""
    env = os.environ if env is None else env
    explicit = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit and Path(explicit).expanduser().is_file():
        return f"file {explicit} (GOOGLE_APPLICATION_CREDENTIALS)"
    adc = config_dir(env) / "application_default_credentials.json"
    if adc.is_file():
        return f"file {adc} (gcloud auth application-default login)"
    if env.get("GCE_METADATA_HOST") or (
        env.get("NO_GCE_CHECK", "").lower() != "true" and on_google_vm()
    ):
        return "the VM's service account (metadata server)"
    return None


def discover(
    project: str | None = None, zone: str | None = None, env: Mapping[str, str] | None = None
) -> GcloudContext:
    env = os.environ if env is None else env
    cfg = config_dir(env)
    configuration = active_configuration(cfg, env)
    props = read_properties(cfg, configuration)
    ctx = GcloudContext(config_dir=cfg, configuration=configuration)
    for value, source in (
        (project, "flag"),
        (env.get("CLOUDSDK_CORE_PROJECT"), "CLOUDSDK_CORE_PROJECT"),
        (props.get("core", {}).get("project"), f"gcloud config '{configuration}'"),
        (env.get("GOOGLE_CLOUD_PROJECT"), "GOOGLE_CLOUD_PROJECT"),
        (env.get("GCLOUD_PROJECT"), "GCLOUD_PROJECT"),
    ):
        if value:
            ctx.project, ctx.project_source = value, source
            break
    for value, source in (
        (zone, "flag"),
        (env.get("CLOUDSDK_COMPUTE_ZONE"), "CLOUDSDK_COMPUTE_ZONE"),
        (props.get("compute", {}).get("zone"), f"gcloud config '{configuration}'"),
    ):
        if value:
            ctx.zone, ctx.zone_source = value, source
            break
    ctx.account = env.get("CLOUDSDK_CORE_ACCOUNT") or props.get("core", {}).get("account")
    ctx.credentials = find_credentials(env)
    if ctx.credentials is None:
        signed_in = signed_in_account(ctx)
        missing = "No Application Default Credentials"
        if signed_in:  # the course's `gcloud auth login` alone: say why it is not enough
            missing = (
                f"gcloud is signed in as {signed_in}, but that makes no Application Default "
                "Credentials"
            )
        ctx.problems.append((missing, ADC_LOGIN))
    if ctx.project is None:
        ctx.problems.append(("No project is set", "gcloud config set project PROJECT_ID"))
    return ctx


ADC_LOGIN = "gcloud auth application-default login"


def credentialed_accounts(cfg_dir: Path) -> list[str]:
    """The accounts gcloud holds credentials for (what `gcloud auth list` shows), read from its
    credentials.db; none when gcloud has none or the file cannot be read."""
    db = cfg_dir / "credentials.db"
    if not db.is_file():
        return []
    import sqlite3  # only when gcloud has signed someone in

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            rows = con.execute("SELECT account_id FROM credentials").fetchall()
    except sqlite3.Error:
        return []
    return sorted(str(row[0]) for row in rows if row and row[0])


def signed_in_account(ctx: GcloudContext) -> str | None:
    """gcloud's active account (`gcloud config get account`), else one it holds credentials for."""
    if ctx.account:
        return ctx.account
    accounts = credentialed_accounts(ctx.config_dir) if ctx.config_dir is not None else []
    return accounts[0] if accounts else None


def signed_in_without_adc(ctx: GcloudContext) -> str | None:
    """The course's `gcloud auth login` done and `gcloud auth application-default login` not:
    gcloud has an account, but google.auth.default() would raise DefaultCredentialsError
    (:func:`find_credentials` looks where it looks, without its network probe). Then the one
    line every command says, with the command to type; else None.

    The preflight calls this too: one detection, one wording."""
    if ctx.credentials is not None:
        return None
    account = signed_in_account(ctx)
    if account is None:
        return None
    return (
        f"gcloud is signed in as {account} (gcloud auth login), but tpuwizard, like every "
        "Google client library, needs Application Default Credentials, which that does not "
        f"make: run  {ADC_LOGIN}"
    )


def has_credentials(env: Mapping[str, str] | None = None) -> bool:
    return find_credentials(env) is not None


def validate_project(project: str) -> str:
    if not is_project_id(project or ""):
        raise BadInput(
            f"{shown(project)} is not a valid project id: it must be 6-30 characters of lower-case "
            "letters, digits and hyphens, start with a letter and not end with a hyphen. "
            "`gcloud projects list` shows yours."
        )
    return project


def validate_zone(zone: str) -> str:
    if not is_zone(zone or ""):
        raise BadInput(
            f"{shown(zone)} is not a zone name: zones look like us-central1-a "
            "(region, then a letter) or us-central1-ai1a (an AI zone). `tpuwizard zones` lists "
            "them."
        )
    return zone


def validate_node_name(name: str) -> str:
    if not is_resource_name(name or ""):
        raise BadInput(
            f"{shown(name)} is not a valid TPU name: use 1-63 lower-case letters, digits and "
            "hyphens, starting with a letter and not ending with a hyphen (e.g. jax-course-tpu-01)."
        )
    return name
