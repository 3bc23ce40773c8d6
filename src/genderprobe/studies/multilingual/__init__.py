"""The multilingual measurements of Zhao et al. 2024, in six languages.

words_probe, pronouns_probe, dialogue_probe: the three probes; prompts: the
three prompts per language; answers, word_reader, pronoun_reader, forms: the
readers of chosen words and filled-in pronouns, in any script; script: which
language a text is written in; disparity: disparate impact with stratified
bootstrap intervals; layout and headline: the tables and headline shared by
the words and pronouns probes; topics, checker and refusals: the dialogue
labeller/checker loop; calibration: what the reference personas answer;
dataset: the word, occupation and name lists.
"""
