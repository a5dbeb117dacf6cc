"""Askbase engine: question → SQL → rows. No chat-platform code lives here."""
