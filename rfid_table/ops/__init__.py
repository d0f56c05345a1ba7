"""The operator's tools: registering decks and chips, the card room's broker (``broker_setup``, built on the
Mosquitto runner in ``broker``), the live view (``watch``), diagnostics (``diag``), the broker login these viewers
share, and exporting the journal's hands."""
