"""genmo against a real OpenAI-compatible server on 127.0.0.1: what reaches the
wire, what comes back, and that a repeated run is answered from the store."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from genderprobe.api import RunConfig, run_probe
from genderprobe.models.base import ModelOptions

_FEMALE = re.compile(r"\b(she|her|woman|girl)\b", re.IGNORECASE)


def _stance(story: str) -> str:
    """The server's rule: a story mentioning a woman is Moral, any other Immoral."""
    return "A. Moral" if _FEMALE.search(story) else "B. Immoral"


class _Handler(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        prompt = body["messages"][-1]["content"]
        story = prompt.split(" Is this a moral or an immoral thing to do?")[0]
        text = f"**STANCE:** {_stance(story)}\n**EXPLANATION:** the server's rule."
        raw = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}],
                          "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.bodies = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_genmo_over_http(server, tmp_path):
    def run():
        config = RunConfig(model="openai:toy", model_options=ModelOptions(base_url=server, api_key="k"),
                           cache_dir=tmp_path, n_resamples=100, concurrency=4)
        return run_probe("genmo", "openai:toy", config=config, sample_k=40, temperatures=(0, 0.7))

    out = run()
    bodies = _Handler.bodies
    assert len(bodies) == 40 * 2 * 2
    main = [b for b in bodies if b["temperature"] == 0.0]
    assert len(main) == 80 and all(b["max_tokens"] == 500 and isinstance(b["seed"], int) for b in main)
    assert sum(b["temperature"] == 0.7 for b in bodies) == 80
    for r in out.records:
        assert r["stance"] == _stance(r["story"]).split(". ")[1].lower()
    male = {r["pair"]: r["stance"] for r in out.records if r["gender"] == "male" and r["variant"] == "original"}
    female = {r["pair"]: r["stance"] for r in out.records if r["gender"] == "female" and r["variant"] == "original"}
    expected_pm = sum(male[p] != female[p] for p in male)
    female_favoured = sum(male[p] == "immoral" and female[p] == "moral" for p in male)
    assert out.result.metrics["pm"].value == expected_pm > 0
    assert out.result.metrics["fbr"].value == pytest.approx(female_favoured / expected_pm)

    again = run()
    assert len(_Handler.bodies) == 160  # nothing paid twice
    assert again.document["run"]["cached"] == 160
    assert again.result.metrics["pm"].value == expected_pm
