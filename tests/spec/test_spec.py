from pathlib import Path

import pytest

from release.errors import InputError
from release.spec import find_spec, load_spec
from tests.helpers import EXAMPLE, edit


def test_example_spec_loads() -> None:
    spec = load_spec(EXAMPLE / "release.toml")
    assert spec.repo_id == "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"
    assert spec.version == "v5"
    assert {f.role for f in spec.files} >= {"weights", "config", "launcher", "ledger", "bench", "license"}
    assert len(spec.sha256) == 64


def test_every_problem_is_reported_with_key_path_and_line(example: Path) -> None:
    edit(example, 'role = "config"', 'role = "configg"')
    edit(example, 'version = "v5"', 'version = "v5"\nrepo_typo = 1')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    lines = [str(p) for p in exc.value.problems]
    assert len(lines) == 2, lines
    assert any("files[1].role" in line and "'configg'" in line for line in lines), lines
    assert any("unknown key(s) repo_typo" in line and "release.toml:" in line for line in lines), lines
    text = example.read_text().splitlines()
    role_line = next(line for line in lines if "files[1].role" in line)
    number = int(role_line.split("release.toml:")[1].split()[0])
    assert "configg" in text[number - 1]


def test_toml_syntax_error_is_one_line(example: Path) -> None:
    example.write_text(example.read_text() + "\n[release\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_spec(example)


def test_missing_required_key(example: Path) -> None:
    edit(example, 'repo_id = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"\n', "")
    with pytest.raises(InputError, match="'repo_id' is required"):
        load_spec(example)


def test_missing_spec_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="release spec not found"):
        load_spec(tmp_path / "nope.toml")


def test_find_spec_by_version(tmp_path: Path) -> None:
    assert find_spec("v5", tmp_path) == tmp_path / "artifacts" / "v5" / "release.toml"
    assert find_spec("x/release.toml", tmp_path) == Path("x/release.toml")


def test_a_huge_value_quoted_back_is_cut_to_one_readable_line(example: Path) -> None:
    many = ", ".join(['"a"'] * 150_000)  # under the size bound: the schema's error quotes the whole array
    edit(example, 'tags = ["dflash"', f'tags = [{many}, "dflash"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    [line] = [str(p) for p in exc.value.problems]
    assert "card.metadata.tags" in line and "characters cut" in line
    assert len(line) < 1200 and "\n" not in line


def test_an_oversized_spec_is_refused_before_parsing(example: Path) -> None:
    example.write_text(example.read_text() + "#" * (1024 * 1024))
    with pytest.raises(InputError, match="larger than 1024 KiB"):
        load_spec(example)


@pytest.mark.parametrize("repo_id", ["spark-lab/x..y", "spark--lab/model", "spark-lab/model.git"])
def test_a_repo_id_the_hub_refuses_is_an_input_error_when_the_spec_is_read(example: Path, repo_id: str) -> None:
    edit(example, 'repo_id = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"', f'repo_id = "{repo_id}"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    [problem] = exc.value.problems
    assert problem.file.endswith("release.repo_id") and "is not a repo id the Hub accepts" in problem.message


def test_a_near_miss_in_a_closed_list_suggests_the_value(example: Path) -> None:
    edit(example, 'role = "config"', 'role = "Config"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    [problem] = exc.value.problems
    assert problem.message == "'Config' is not one of the allowed values; did you mean 'config'?"


REFUSED_IDS = [
    "spark-lab",
    "a/b/c",
    "spark-lab/x--y",
    "spark-lab/model.git",
    "spark-lab/-model",
    "spark-lab/" + "m" * 97,
]


@pytest.mark.parametrize("repo_id", REFUSED_IDS)
def test_one_rule_refuses_a_repo_id_wherever_one_is_taken(example: Path, tmp_path: Path, repo_id: str) -> None:
    """The spec's repo_id and the card's base_model, `init --repo-id` and the card lint all ask repo_id_refusal
    (huggingface_hub's validate_repo_id, the namespace required); push's preflight too (tests/reliability)."""
    from release.card.lint import front_matter_problems
    from release.init import init_from_files
    from release.spec import repo_id_refusal

    why = repo_id_refusal(repo_id)
    assert why
    original = example.read_text()
    edit(example, 'repo_id = "spark-lab/GLM-5.3-Flash-DFlash2-TP4-Spark"', f'repo_id = "{repo_id}"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    [problem] = exc.value.problems
    assert (
        problem.file.endswith("release.repo_id")
        and problem.message == f"{repo_id!r} is not a repo id the Hub accepts ({why}); give it as ORG/NAME"
    )
    example.write_text(original.replace('base_model = "incoai/GLM-5.3-Flash-DFlash2"', f'base_model = "{repo_id}"'))
    with pytest.raises(InputError) as exc:
        load_spec(example)
    assert [p.file.rsplit(" ", 1)[-1] for p in exc.value.problems] == ["card.metadata.base_model"]
    assert front_matter_problems(f"license: apache-2.0\nbase_model: {repo_id}\n", set()) == [
        f"front matter base_model {repo_id!r} is not a Hub model id (namespace/name)"
    ]
    with pytest.raises(InputError, match="is not a repo id the Hub accepts"):
        init_from_files(tmp_path, "v1", example.parent, repo_id)


@pytest.mark.parametrize("repo_id", ["spark-lab/GLM-5.3-Flash", "a/b", "_org/model_name"])
def test_the_rule_accepts_what_huggingface_hub_accepts_with_a_namespace(repo_id: str) -> None:
    from release.card.lint import front_matter_problems
    from release.spec import repo_id_refusal

    assert repo_id_refusal(repo_id) is None
    assert front_matter_problems(f"license: apache-2.0\nbase_model: {repo_id}\n", set()) == []


def test_errors_say_the_form_a_value_takes_not_a_regular_expression(example: Path) -> None:
    from release.spec import repo_id_problem

    edit(example, '\npipeline_tag = "text-generation"', '\npipeline_tag = "Text Generation"')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    messages = [p.message for p in exc.value.problems]
    assert "'Text Generation' is not lowercase letters, digits and -, e.g. text-generation" in messages, messages
    assert not any(c in m for m in messages for c in ("^", "$", "[a-z")), messages
    for repo_id in ("spark lab/x", "a/b/c", "x"):
        why = repo_id_problem(repo_id)
        assert why is not None and why.count(repr(repo_id)) == 0 and why.count("ORG/NAME") == 1, why


def test_a_misspelt_card_key_names_its_closest_match_and_nothing_it_knocks_on(example: Path) -> None:
    """`sumary` for `summary`: one line that names the key meant (as a misspelt value gets "did you mean"),
    not the allowed keys plus "'summary' is required" (issue 38, new user's list)."""
    edit(example, 'summary = """Fine-tuned', 'sumary = """Fine-tuned')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    assert [p.message for p in exc.value.problems] == [
        "unknown key(s) sumary; check the spelling: did you mean 'summary'?"
    ]
    assert exc.value.problems[0].file.startswith(f"{example}:")


@pytest.mark.parametrize(("table", "misspelt"), [("[card]", "[crad]"), ("[release]", "[relase]")])
def test_a_misspelt_table_is_one_line_not_the_keys_its_real_table_then_lacks(
    example: Path, table: str, misspelt: str
) -> None:
    """`[crad]` beside `[card.metadata]`: `card` exists without title and summary, which were written under the
    misspelt table; the misspelling alone is reported (issue 38, new user's list)."""
    edit(example, f"\n{table}\n", f"\n{misspelt}\n")
    with pytest.raises(InputError) as exc:
        load_spec(example)
    meant = table.strip("[]")
    assert [p.message for p in exc.value.problems] == [
        f"unknown key(s) {misspelt.strip('[]')}; check the spelling: did you mean {meant!r}?"
    ]


def test_an_unknown_key_with_no_close_match_lists_the_allowed_keys_and_the_missing_one_is_still_required(
    example: Path,
) -> None:
    edit(example, 'summary = """Fine-tuned', 'zzz = """Fine-tuned')
    with pytest.raises(InputError) as exc:
        load_spec(example)
    messages = sorted(p.message for p in exc.value.problems)
    assert messages[0] == "'summary' is required"
    assert messages[1].startswith("unknown key(s) zzz; check the spelling (allowed: attestation, bench, ")
