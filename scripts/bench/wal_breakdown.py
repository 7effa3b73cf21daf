#!/usr/bin/env python3
"""Where a burst's WAL went, per task: by table (with its indexes), then by relation and record kind.

    wal_breakdown.py RELMAP WALDUMP TASKS

RELMAP: `filenode table relation` lines of the burst's database (pg_relation_filenode of each
relation, the table it belongs to: itself, or the table of an index);
WALDUMP: `pg_waldump` output over the burst's WAL range; TASKS: the tasks of the burst. Records
are counted at their whole size (with any full-page image). A relation not in RELMAP (another
database's) is shown as `(other)`, a record of no relation (commits, multixacts) by its resource
manager.
"""
import collections
import re
import sys

RECORD = re.compile(r"rmgr: (\w+)\s+len \(rec/tot\):\s*\d+/\s*(\d+),.*?desc: (\S+)(.*)")
RELATION = re.compile(r"rel \d+/\d+/(\d+)")


def main(relmap_path, waldump_path, tasks):
    names, tables = {}, {}
    with open(relmap_path) as relmap:
        for line in relmap:
            parts = line.split()
            if len(parts) == 3:
                tables[parts[2]] = parts[1]
                names[parts[0]] = parts[2]
    by_kind = collections.defaultdict(lambda: [0, 0])
    with open(waldump_path) as dump:
        for line in dump:
            record = RECORD.search(line)
            if not record:
                continue
            rmgr, size, kind, rest = record.group(1), int(record.group(2)), record.group(3), record.group(4)
            relation = RELATION.search(rest)
            name = names.get(relation.group(1), "(other)") if relation else f"({rmgr})"
            entry = by_kind[(name, f"{rmgr}/{kind}")]
            entry[0] += 1
            entry[1] += size
    by_table = collections.defaultdict(lambda: [0, 0])
    for (name, _), (count, size) in by_kind.items():
        table = by_table[tables.get(name, name)]
        table[0] += count
        table[1] += size
    total = sum(size for _, size in by_table.values())
    print(f"WAL of the burst (posting and draining), per task: {total / tasks:,.0f} B in "
          f"{sum(c for c, _ in by_table.values()) / tasks:.1f} records")
    print(f"{'table (with its indexes)':<40} {'B/task':>8} {'records/task':>13}")
    for name, (count, size) in sorted(by_table.items(), key=lambda kv: -kv[1][1]):
        if size / tasks >= 1:
            print(f"{name:<40} {size / tasks:>8,.0f} {count / tasks:>13.2f}")
    print()
    print(f"{'relation':<40} {'record':<24} {'B/task':>8} {'records/task':>13}")
    for (name, kind), (count, size) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        if size / tasks >= 10:
            print(f"{name:<40} {kind:<24} {size / tasks:>8,.0f} {count / tasks:>13.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
