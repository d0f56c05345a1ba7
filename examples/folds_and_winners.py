"""Follow a table's public feed and print each fold and each hand's winners.

    python examples/folds_and_winners.py [HOST [PORT [TABLE]]]     # defaults: localhost 1883 every table

Run `rfid-table demo` (or `rfid-table sim`) and point this at its broker. docs/events.md has every event.
"""
import json
import sys

import paho.mqtt.client as mqtt

DEFAULTS = ["localhost", "1883", "+"]
host, port, table = sys.argv[1:4] + DEFAULTS[len(sys.argv[1:4]):]
topic = f"rfid-table/{table}/public/events"  # every event, no hole cards; docs/mqtt.md lists the topics


def on_message(client, userdata, message):
    event = json.loads(message.payload)
    where = f"{message.topic.split('/')[1]} hand {event['hand']}"  # rfid-table/<table>/public/events
    if event["type"] == "fold":
        print(f"{where}: seat {event['seat']} folds", flush=True)
    elif event["type"] == "showdown":  # the hand's result, just before its hand_ended
        won = [f"seat {seat} wins {event['payouts'].get(str(seat), 'by the cards')}" for seat in event["winners"]]
        print(f"{where}: {', '.join(won) or 'no winner read'}", flush=True)
    elif event["type"] == "hand_ended" and event["misdeal"]:
        print(f"{where}: misdeal, nobody wins", flush=True)


client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
client.on_connect = lambda client, userdata, flags, reason, properties: client.subscribe(topic, qos=1)
client.on_subscribe = lambda *args: print(f"following {topic} on {host}:{port}", flush=True)
client.on_message = on_message
client.connect(host, int(port))
client.loop_forever()
