"""Which /dev/gpiochipN drives the 40-pin header, found by its label (rpi-lgpio is told through RPI_LGPIO_CHIP)."""

import os
import re
from typing import Callable, MutableMapping

# Labels of the gpiochip that drives the 40-pin header: Pi 5 (RP1), Pi 4, Pi 3 / Zero / 2.
HEADER_CHIP_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")
_GPIO_GET_CHIPINFO_IOCTL = 0x8044B401  # _IOR(0xB4, 0x01, struct gpiochip_info { char name[32], label[32]; u32 lines })


def gpiochip_label(path: str) -> str | None:
    """The label of a /dev/gpiochipN character device (what ``gpiodetect`` shows in brackets), None if unreadable."""
    import fcntl  # Unix only: imported here so this module imports anywhere

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = fcntl.ioctl(fd, _GPIO_GET_CHIPINFO_IOCTL, bytes(68))
    except OSError:
        return None
    finally:
        os.close(fd)
    return info[32:64].split(b"\0", 1)[0].decode("ascii", "replace")


def find_header_gpiochip(dev: str = "/dev", label_of: Callable[[str], str | None] = gpiochip_label) -> int | None:
    """The number of the gpiochip driving the header, found by its label, never assumed.

    On the Pi 5 the header's chip was gpiochip4 until kernel 6.6.45 and is gpiochip0 since (some systems keep a
    gpiochip4 symlink); on earlier Pis it is gpiochip0. Symlinks are skipped: the real device is found anyway.
    """
    try:
        names = [n for n in os.listdir(dev) if re.fullmatch(r"gpiochip[0-9]+", n)]
    except OSError:
        return None
    for name in sorted(names, key=lambda n: int(n[8:])):
        path = os.path.join(dev, name)
        if os.path.islink(path):
            continue
        if label_of(path) in HEADER_CHIP_LABELS:
            return int(name[8:])
    return None


def choose_lgpio_chip(environ: MutableMapping[str, str] = os.environ,
                      find_chip: Callable[[], int | None] = find_header_gpiochip) -> int | None:
    """Tell rpi-lgpio which gpiochip is the header's (RPI_LGPIO_CHIP) unless the service already says so.

    rpi-lgpio picks a chip by number from the board model; a kernel that renumbered the chips breaks that guess.
    The classic RPi.GPIO ignores the variable.
    """
    if "RPI_LGPIO_CHIP" in environ:
        return None
    chip = find_chip()
    if chip is not None:
        environ["RPI_LGPIO_CHIP"] = str(chip)
    return chip
