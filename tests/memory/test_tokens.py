"""Token counts: the fast path (tiktoken + LiteLLM's bundled files) equals litellm.token_counter."""

import os

from auto_analyst.memory.context.tokens import DEFAULT_TOKEN_MODEL, _bundled_encoding, count_tokens


def test_fast_path_matches_litellm_token_counter():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    assert _bundled_encoding() is not None
    for text in ["hello world", "Quel est le chiffre d'affaires à Montréal ? 2 751,86 €",
                 '{"tables":[{"name":"iris","n_rows":150}]}', "df.groupby('species')['petal_length'].mean()\n" * 20]:
        assert count_tokens(text) == litellm.token_counter(model=DEFAULT_TOKEN_MODEL, text=text)


def test_empty_text_is_zero_tokens():
    assert count_tokens("") == 0
