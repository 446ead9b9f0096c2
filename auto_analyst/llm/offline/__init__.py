"""The embedded model's old home: it lives in ``auto_analyst.offline`` now (docs/offline.md); kept for code that still
imports ``auto_analyst.llm.offline.engine`` (tests written on other branches before the move)."""
