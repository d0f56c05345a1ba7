"""What a table is configured with: the table configuration (``table``), the one checker that finds and words
every problem in it (``checker``), and the chip registry (``registry``)."""
