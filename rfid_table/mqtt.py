"""An MQTT client for the table's broker, set up from ``[mqtt]``: MQTT 5, login, TLS, reconnect, in-flight window.

The service's publisher, the operator's live view and diagnostics, and the developer's tools connect with it alike:
it sits beside those packages, not in one of them.
"""

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from rfid_table.config.table import MqttSettings


def make_client(settings: MqttSettings, client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    if settings.username:
        client.username_pw_set(settings.username, settings.password)
    if settings.tls:
        # TLS 1.2 or newer; the broker's certificate must chain to tls_ca_file (or to the system's authorities)
        # and, unless tls_insecure, name the host connected to.
        client.tls_set(ca_certs=settings.tls_ca_file, certfile=settings.tls_cert_file, keyfile=settings.tls_key_file)
        client.tls_insecure_set(settings.tls_insecure)
    client.reconnect_delay_set(min_delay=1, max_delay=settings.reconnect_max_s)
    # paho's default of 20 unacknowledged QoS 1 messages stalls a burst (a whole deal arrives in a second); the
    # backlog's window comes on top of that.
    client.max_inflight_messages_set(200 + settings.backlog_in_flight)
    return client
