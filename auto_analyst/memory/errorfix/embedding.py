"""Embedding functions of the error-fix memory.

The default, :class:`HashingEmbeddingFunction`, ships with the project and downloads nothing: it hashes
word unigrams, word bigrams and character n-grams of error messages and code into a fixed-size, L2-normalised
vector (numpy only). Error messages and code are matched well by such lexical features (docs/error_memory.md):
exception names, library identifiers (``OneHotEncoder``) and message fragments (``could not convert``) recur
verbatim between a stored error and a new one.

This module imports chromadb at import time; :mod:`auto_analyst.memory.errorfix.memory` imports it lazily so that
``import auto_analyst`` stays light.
"""

from __future__ import annotations

import math
import re
import zlib
from functools import lru_cache
from itertools import pairwise
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from auto_analyst.errors import BadInputError

__all__ = ["HashingEmbeddingFunction", "embedding_key", "make_embedding_function"]

# Placeholders written by anonymize() carry no meaning for similarity; drop them before tokenising.
_PLACEHOLDER = re.compile(r"<(?:col|value)\d+>")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Function words that occur in nearly every summary; without IDF weights they would dominate similarity.
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "when", "with", "which", "while", "use", "used", "using", "error", "summary", "correction"]
)


def _hash(feature: str) -> int:
    # crc32 is stable across processes (unlike hash()) and cheap; 32 bits are plenty for <= 2**16 buckets.
    return zlib.crc32(feature.encode("utf-8"))


@lru_cache(maxsize=65536)
def _token_features(token: str, dim: int, char_min: int, char_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket indices and signs of one token's character n-grams (cached: tokens repeat across entries)."""
    padded = f" {token} "
    grams = [padded[i : i + n] for n in range(char_min, char_max + 1) for i in range(len(padded) - n + 1)]
    hashes = np.fromiter((_hash("c:" + g) for g in grams), dtype=np.uint64, count=len(grams))
    return (hashes % dim).astype(np.int64), np.where(hashes & (1 << 31), -1.0, 1.0)


def _words(text: str) -> list[str]:
    """Lower-case word tokens; identifiers also yield their camelCase / snake_case parts."""
    out: list[str] = []
    for tok in _TOKEN.findall(_PLACEHOLDER.sub(" ", text)):
        if tok[0].isdigit():
            continue  # numbers are data (values, line numbers), not the kind of error
        low = tok.lower()
        parts = [p.lower() for piece in tok.split("_") for p in _CAMEL.findall(piece)]
        if low not in _STOP:
            out.append(low)
        if len(parts) > 1:
            out.extend(p for p in parts if p not in _STOP and len(p) > 1)
    return out


def _accumulate(features: list[str], dim: int) -> np.ndarray:
    vec = np.zeros(dim, dtype=np.float64)
    if not features:
        return vec
    counts: dict[str, int] = {}
    for f in features:
        counts[f] = counts.get(f, 0) + 1
    for f, c in counts.items():
        h = _hash(f)
        # Sublinear term frequency: a word repeated in a traceback should not outweigh distinct evidence.
        vec[h % dim] += (-1.0 if h & (1 << 31) else 1.0) * (1.0 + math.log(c))
    return vec


def _unit(vec: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


class HashingEmbedder:
    """The numpy core of :class:`HashingEmbeddingFunction` (usable without chromadb objects).

    Args:
        dim: vector length. 1024 keeps collisions rare for texts of a few hundred tokens while a 10,000-entry
            index stays ~40 MB (float32).
        char_ngrams: inclusive range of character n-gram lengths taken inside each word (3-5: long enough to
            carry meaning, short enough to match ``float``/``floats`` and ``Encoder``/``OneHotEncoder``).
        weights: weights of the (unigram, bigram, char n-gram) groups, each group L2-normalised first.
    """

    def __init__(self, dim: int = 1024, char_ngrams: tuple[int, int] = (3, 5), weights: tuple[float, float, float] = (1.0, 0.6, 0.8)) -> None:
        if dim < 16 or char_ngrams[0] < 1 or char_ngrams[1] < char_ngrams[0]:
            raise BadInputError(f"Bad hashing embedding parameters dim={dim}, char_ngrams={char_ngrams}.")
        self.dim = int(dim)
        self.char_ngrams = (int(char_ngrams[0]), int(char_ngrams[1]))
        self.weights = tuple(float(w) for w in weights)

    def embed_one(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector of length ``dim`` (all zeros for a text without words)."""
        words = _words(text)
        uni = _accumulate(["w:" + w for w in words], self.dim)
        bi = _accumulate([f"b:{a} {b}" for a, b in pairwise(words)], self.dim)
        char = np.zeros(self.dim, dtype=np.float64)
        for w in set(words):
            idx, sign = _token_features(w, self.dim, *self.char_ngrams)
            np.add.at(char, idx, sign)
        wu, wb, wc = self.weights
        return _unit(wu * _unit(uni) + wb * _unit(bi) + wc * _unit(char)).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` as a float32 array of shape (len(texts), dim)."""
        return np.stack([self.embed_one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


@register_embedding_function
class HashingEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function over :class:`HashingEmbedder`; registered so a collection reopens after restart."""

    def __init__(self, dim: int = 1024, char_ngrams: tuple[int, int] | list[int] = (3, 5), weights: tuple[float, float, float] | list[float] = (1.0, 0.6, 0.8)) -> None:
        self._embedder = HashingEmbedder(dim, tuple(char_ngrams), tuple(weights))  # type: ignore[arg-type]

    def __call__(self, input: Documents) -> Embeddings:
        # An all-zero vector has no cosine direction; a tiny constant keeps Chroma's distance finite.
        out = self._embedder.embed(list(input))
        out[~out.any(axis=1)] = 1.0 / math.sqrt(self._embedder.dim)
        return [row for row in out]

    @staticmethod
    def name() -> str:
        return "auto_analyst_hashing"

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        e = self._embedder
        return {"dim": e.dim, "char_ngrams": list(e.char_ngrams), "weights": list(e.weights)}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> HashingEmbeddingFunction:
        return HashingEmbeddingFunction(
            dim=int(config.get("dim", 1024)),
            char_ngrams=tuple(config.get("char_ngrams", (3, 5))),
            weights=tuple(config.get("weights", (1.0, 0.6, 0.8))),
        )

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        if old_config != new_config:
            raise ValueError("The hashing embedding of a collection cannot change; reindex into a new collection.")


def make_embedding_function(settings: Any) -> EmbeddingFunction:
    """The embedding function chosen by ``settings.embedding``.

    Args:
        settings: an :class:`auto_analyst.config.Settings`.

    Returns:
        ``"hashing"``: :class:`HashingEmbeddingFunction` (offline). ``"default"``: Chroma's default (downloads
        an ONNX model at first use). ``"openai"``: chromadb's ``OpenAIEmbeddingFunction`` with model
        ``text-embedding-3-small`` and ``settings.api_key`` or ``OPENAI_API_KEY``.

    Raises:
        BadInputError: an unknown ``embedding`` value, or ``openai`` without a key / the openai package.
    """
    choice = (settings.embedding or "hashing").strip().lower()
    if choice == "hashing":
        return HashingEmbeddingFunction()
    if choice == "default":
        from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

        return DefaultEmbeddingFunction()
    if choice == "openai":
        import warnings

        from chromadb.utils.embedding_functions import OpenAIEmbeddingFunction

        try:
            with warnings.catch_warnings():
                # chromadb warns that a directly passed key is not persisted; we pass it again at every open.
                warnings.simplefilter("ignore", DeprecationWarning)
                return OpenAIEmbeddingFunction(api_key=settings.api_key, model_name="text-embedding-3-small")
        except ValueError as exc:
            raise BadInputError(f"embedding='openai' cannot be used: {exc}. Set OPENAI_API_KEY or choose 'hashing'.") from None
    raise BadInputError(f"Unknown embedding {settings.embedding!r}; choose 'hashing', 'default' or 'openai'.")


def embedding_key(ef: EmbeddingFunction) -> str:
    """A collection-name-safe key of an embedding function and its config (a new key means a new index)."""
    try:
        config = ef.get_config()
    except Exception:  # noqa: BLE001 - third-party functions may not implement get_config
        config = {}
    config = {k: v for k, v in (config or {}).items() if "key" not in k.lower()}
    digest = format(zlib.crc32(repr(sorted(config.items())).encode()), "08x")
    return re.sub(r"[^A-Za-z0-9_-]", "-", f"{ef.name()}-{digest}")
