"""Synchronise tide readings from field stations into the central store.

Usage: python sync.py --since 2026-05-01
"""
from __future__ import annotations

import argparse
import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timezone

log = logging.getLogger("tidewatch.sync")

BATCH_SIZE = 500
RETRY_DELAYS = (1, 5, 30)


@dataclass
class Reading:
    station: str
    taken_at: datetime
    level_cm: float

    def is_recent(self, now: datetime) -> bool:
        return (now - self.taken_at).total_seconds() < 3600


class StationClient:
    def __init__(self, base_url: str):
        self.base_url = base_url

    async def fetch(self, since: datetime) -> list[Reading]:
        raise NotImplementedError

    def close(self) -> None:
        pass


def parse_since(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def chunks(items, size=BATCH_SIZE):
    for start in range(0, len(items), size):
        yield items[start:start + size]


async def sync_station(client: StationClient, since: datetime) -> int:
    def keep(reading: Reading) -> bool:
        return reading.level_cm > -500

    readings = [r for r in await client.fetch(since) if keep(r)]
    for batch in chunks(readings):
        log.info("storing %d readings", len(batch))
    return len(readings)


# def sync_all_legacy(clients):
#     for c in clients:
#         sync_station(c, None)


async def sync_all(clients: list[StationClient], since: datetime) -> int:
    counts = await asyncio.gather(*(sync_station(c, since) for c in clients))
    return sum(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description="Sync tide readings")
    parser.add_argument("--since", type=parse_since, required=True)
    args = parser.parse_args()
    total = asyncio.run(sync_all([], args.since))
    log.info("synced %d readings", total)


if __name__ == "__main__":
    main()
