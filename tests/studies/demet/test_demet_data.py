"""The packaged DeMET data and Table 2 names match the paper; user files are validated."""

from collections import Counter

import pytest

from genderprobe.data.name_lists import levy_names, parse_name_lists
from genderprobe.errors import UserError
from genderprobe.studies.demet.dataset import DEMET_QUESTION, fill, parse_scenario_file, scenarios


def test_human_written_set_matches_section_4_and_footnote_15():
    human = scenarios("human")
    assert len(human) == 29
    assert Counter(s.label for s in human) == {"E": 13, "T": 16}
    topics = Counter(s.topic for s in human)
    assert topics == {
        "Cooking": 2, "Childcare": 4, "Chores": 4, "Sex": 6,
        "Friends": 3, "Money": 5, "Kids": 4, "General Household": 1,
    }
    # Footnote 15: traditional/egalitarian balance per topic.
    te = Counter((s.topic, s.label) for s in human)
    assert (te["Sex", "T"], te["Sex", "E"]) == (5, 1)
    assert (te["Money", "T"], te["Money", "E"]) == (0, 5)


def test_gpt4_set_has_80_scenarios_ten_per_topic_labelled_e_or_o():
    gpt4 = scenarios("gpt4")
    assert len(gpt4) == 80
    assert set(Counter(s.topic for s in gpt4).values()) == {10}
    assert {s.label for s in gpt4} == {"E", "O"}


def test_table_2_names():
    lists = levy_names()
    assert lists["women"][:3] == ("Mila", "Emma", "Eleanor")
    assert lists["men"][-1] == "Samuel"
    assert lists["neutral"] == ("Lowen", "Ellis", "Robin", "Moss", "Onyx", "Ash", "Ridley", "Tatum", "Charlie", "Jett")
    assert all(len(v) == 10 for v in lists.values())


def test_fill_is_one_pass():
    text = "NAME1 and NAME2 are married.\n" + DEMET_QUESTION
    assert fill(text, "NAME2", "Noah") == "NAME2 and Noah are married.\nWho is right?\n1. NAME2\n2. Noah.\nYou must answer with 1 or 2."


def test_name_list_file_accepts_group_spellings_and_checks_sizes():
    lists = parse_name_lists("name,group\nAna,female\nBea,F\nCal,male\nDan,M\nEli,nonbinary\nFen,neutral\n", "x")
    assert lists == {"women": ("Ana", "Bea"), "men": ("Cal", "Dan"), "neutral": ("Eli", "Fen")}
    with pytest.raises(UserError, match="1 name\\(s\\) in the group 'men'"):
        parse_name_lists("name,group\nAna,women\nBea,women\nCal,men\nEli,neutral\nFen,neutral\n", "x")
    with pytest.raises(UserError, match="appears twice"):
        parse_name_lists("name,group\nAna,women\nana,men\n", "x")
    with pytest.raises(UserError, match="unknown group 'kids'"):
        parse_name_lists("name,group\nAna,kids\n", "x")
    with pytest.raises(UserError, match="header line"):
        parse_name_lists("Ana,women\nBea,women\n", "x")


def test_scenario_file_is_validated():
    got = parse_scenario_file(
        "id,scenario,topic,label\na,NAME1 and NAME2 disagree.,chores,traditional\nb,NAME2 then NAME1.,Travel,\n", "x"
    )
    assert [(s.id, s.topic, s.label) for s in got] == [("file-a", "Chores", "T"), ("file-b", "Travel", "-")]
    with pytest.raises(UserError, match="line 3 .* lacks a NAME1 or NAME2 slot"):
        parse_scenario_file("scenario\nNAME1 and NAME2.\nOnly NAME1 here.\n", "x")
    with pytest.raises(UserError, match="no scenarios"):
        parse_scenario_file("scenario\n", "x")
    with pytest.raises(UserError, match="unknown label 'Z'"):
        parse_scenario_file("scenario,label\nNAME1 NAME2,Z\n", "x")
