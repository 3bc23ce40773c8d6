"""Name replacement on real GenMO stories: every mention of the main character, nothing else."""

import pytest

from genderprobe.studies.genmo.ablation import (
    PARAPHRASED_TEMPLATES,
    known_name_genders,
    main_character,
    name_pool,
    rename_main_character,
    replace_name,
    tokens,
)
from genderprobe.studies.genmo.dataset import StoryPair, story_pairs
from genderprobe.studies.genmo.stance import TEMPLATES

POOLS = {g: name_pool(g) for g in ("male", "female")}


def _pair(male: str, female: str) -> StoryPair:
    return StoryPair(0, male, female, "Other", "Other", "ethics")


@pytest.mark.parametrize(
    ("index", "male", "female"),
    [
        (4, "Billy", "Mary"),          # "Bob" is a supporting character in both stories
        (19, "Thomas", "Tanya"),       # the actor of the intent and action sentences, not the first name
        (30, "Mike", "Dallas"),        # "Dallas' best friend"
        (59, "Mike", "Jill"),          # brother "Jack's" stays
        (99, "Paul", "Jane"),          # the supporting character is swapped too (Jack -> Susan)
        (115, "Billy", "Jennifer"),    # the female story's supporting character is called Billy
        (611, "jason", "Jessica"),     # lower-case in the male story
    ],
)
def test_main_character_of_real_pairs(index, male, female):
    main = main_character(story_pairs()[index])
    assert (main.male, main.female) == (male, female)


def test_stories_without_a_named_main_character():
    first_person = [p for p in story_pairs()
                    if p.male_story.replace("I am a man.", "I am a woman.", 1) == p.female_story]
    assert len(first_person) > 400
    assert all(main_character(p) is None for p in first_person)
    # He/She and man/woman swaps are not names.
    assert main_character(_pair("The man ignored the food.", "The woman ignored the food.")) is None


def test_rename_keeps_supporting_characters_and_possessives():
    pair = story_pairs()[115]
    story = pair.female_story
    renamed = replace_name(story, "Jennifer", "Laura")
    assert "Jennifer" not in renamed and renamed.count("Laura") == story.count("Jennifer")
    assert renamed.count("Billy") == story.count("Billy")
    pair30 = story_pairs()[30]
    assert replace_name(pair30.female_story, "Dallas", "Laura").startswith("Laura' best friend")
    assert "Romy" in replace_name(story_pairs()[8].male_story, "Mike", "Tom")


def test_a_mention_before_a_garbled_apostrophe_is_renamed():
    # The loader repairs the released "Alexâ€™s" (pair 172); text from elsewhere may still carry it.
    renamed = rename_main_character(story_pairs()[172], "male", POOLS["male"], seed=0)
    assert renamed.old == "Alex" and "Alex" not in renamed.story
    assert renamed.story.count(renamed.new) == 3 and f"{renamed.new}'s bike" in renamed.story
    assert replace_name("Tom met Alâ€™s friend Al.", "Al", "Bob") == "Tom met Bobâ€™s friend Bob."
    assert replace_name("Oâ€™Al met Al.", "Al", "Bob") is None


def test_replacement_names_are_of_one_gender_only():
    male, female = set(POOLS["male"]), set(POOLS["female"])
    assert not male & female
    assert {"Alexis", "Bailey"}.isdisjoint(male | female)  # the name list gives these to both genders
    assert {"Adam", "Brian"} <= male and {"Abigail", "Brenda"} <= female


def test_names_inside_other_words_are_left_alone():
    story = "Al met Alan and Sally. Al's bill was paid by Al-Amin, and O'Al waited. Al left."
    assert replace_name(story, "Al", "Tom") is None  # "Al-Amin", "O'Al" make it unsafe: refuse
    story = "Al met Alan and Sally at the mall. Al's coat was in the hall. Al left."
    assert replace_name(story, "Al", "Tom") == "Tom met Alan and Sally at the mall. Tom's coat was in the hall. Tom left."


def test_a_name_already_in_the_story_is_never_the_replacement():
    story = "Bill asked Tom for a loan. Bill paid it back."
    assert replace_name(story, "Bill", "Tom") is None
    assert replace_name(story, "Bill", "tom") is None


def test_every_eligible_real_story_changes_only_its_main_character():
    checked = 0
    for pair in story_pairs():
        for gender in ("male", "female"):
            renamed = rename_main_character(pair, gender, POOLS[gender], seed=0)
            if renamed is None:
                continue
            before, after = tokens(pair.story(gender)), tokens(renamed.story)
            assert len(before) == len(after)
            spellings = {renamed.old, renamed.old[:1].upper() + renamed.old[1:]}
            for a, b in zip(before, after):
                assert b == (renamed.new if a in spellings else a)
            assert renamed.new in POOLS[gender]
            assert renamed.new.lower() not in {t.lower() for t in before}
            checked += 1
    assert checked >= 500  # 265 pairs name their main character; both stories of each


def test_rename_is_seeded():
    pair = story_pairs()[4]
    a = rename_main_character(pair, "male", POOLS["male"], seed=1)
    assert a == rename_main_character(pair, "male", POOLS["male"], seed=1)
    others = {rename_main_character(pair, "male", POOLS["male"], seed=s).new for s in range(10)}
    assert len(others) > 1


@pytest.mark.parametrize("template", ["cot", "noncot"])
def test_paraphrase_rewords_the_question_but_keeps_options(template):
    para, original = PARAPHRASED_TEMPLATES[template], TEMPLATES[template]
    assert para != original and "A. Moral B. Immoral C. Both D. Can't say" in para
    assert ("STANCE: ${YOUR_STANCE} EXPLANATION: ${REASON}" in para) == (template == "cot")


# Issue 13: the rename ablation renamed supporting characters: the narrator of a
# first-person story is unnamed, so the swapped name there is another person's
# (often of the other gender: "I am a man. ... Susie"), and in pair 552 the
# actor "john" (lower case) was missed for the supporting "Mark".
FIRST_PERSON = (236, 364, 367, 750)


@pytest.mark.parametrize("index", FIRST_PERSON)
def test_first_person_stories_are_never_renamed(index):
    pair = story_pairs()[index]
    assert main_character(pair) is None
    for gender in ("male", "female"):
        assert rename_main_character(pair, gender, POOLS[gender], seed=0) is None


def test_quoted_speech_does_not_make_a_story_first_person():
    # "I" only inside a character's quoted words: still a third-person story.
    assert (main_character(story_pairs()[69]).male, main_character(story_pairs()[141]).male) == ("Shane", "James")


def test_a_lower_case_actor_is_the_main_character():
    main = main_character(story_pairs()[552])
    assert (main.male, main.female) == ("john", "emily")
    renamed = rename_main_character(story_pairs()[552], "male", POOLS["male"], seed=0)
    assert renamed.old == "john" and renamed.story.startswith("Mark and ")


def test_a_name_of_the_other_gender_is_never_renamed():
    # The male story's swapped character is a woman: renaming her from the male pool is wrong.
    pair = _pair("Tom waited. Susan called Tom twice. Susan left.", "Tom waited. Peter called Tom twice. Peter left.")
    assert rename_main_character(pair, "male", POOLS["male"], seed=0) is None
    assert rename_main_character(pair, "female", POOLS["female"], seed=0) is None


def test_every_renamed_story_of_all_908_pairs_is_third_person_and_keeps_its_gender():
    known = known_name_genders()
    renamed_count = 0
    for pair in story_pairs():
        for gender in ("male", "female"):
            other = "female" if gender == "male" else "male"
            renamed = rename_main_character(pair, gender, POOLS[gender], seed=0)
            if renamed is None:
                continue
            renamed_count += 1
            assert not pair.story(gender).startswith("I am a")
            old = renamed.old[:1].upper() + renamed.old[1:]
            assert not (old in known[other] and old not in known[gender]), (pair.index, gender, old)
            assert renamed.new in known[gender] and renamed.new not in known[other]
    assert renamed_count >= 500
