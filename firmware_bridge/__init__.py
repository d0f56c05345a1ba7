"""Wire protocol between the RFID reader firmware and the host: messages, framing, stream decoding."""
