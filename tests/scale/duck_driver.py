"""Driver of tests/scale/test_duck_sandbox.py: a DuckDB table in a session's sandbox, judged from outside.

Run as ``python duck_driver.py BASE`` (as root, or as an ordinary user). It writes a DuckDB table file
into ``BASE/sess/duck``, starts a Sandbox on it, runs each program of ``PROGRAMS`` and prints one line
``REPORT {json}``: every program's outcome, the expected aggregate computed here with DuckDB, and whether
the table file is byte-for-byte unchanged with its permissions intact afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import duckdb
import pandas as pd

from auto_analyst.config import Settings
from auto_analyst.execution.sandbox import Sandbox, Zygote

ROWS = 200_000
FILE = "big-0123456789abcdef.duckdb"

PROGRAMS = {
    "aggregate": "show(con.sql('SELECT grp, avg(value) AS m, count(*) AS n FROM big GROUP BY grp ORDER BY grp').df(), "
                 "name='means')",
    "types": "print(type(big).__name__, type(df).__name__, type(tables['big']).__name__, type(small).__name__, "
             "type(con).__name__)",
    "show_relation": "show(big)\nshow(con.sql('SELECT * FROM big WHERE grp = \\'g1\\''), name='g1 rows')",
    "settings": "import json\nprint(json.dumps(con.sql(\"SELECT current_setting('memory_limit'), current_setting('threads'), "
                "current_setting('enable_external_access'), current_setting('lock_configuration'), "
                "current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')\")"
                ".fetchall()[0]))",
    "duckdb_sql": "import duckdb\nshow(duckdb.sql('SELECT count(*) AS n FROM big').df(), name='via duckdb.sql')",
    "keep_result": "kept = con.sql('SELECT count(*) AS n FROM big').df()\nrel = con.sql('SELECT 1 AS one')\nown = con",
    "after_keep": "print(int(kept['n'][0]), 'rel' in dir(), 'own' in dir(), type(big).__name__)",
    "pandas_join": "small_sum = con.sql('SELECT grp, sum(value) AS s FROM big GROUP BY grp').df().merge(small, on='grp')\n"
                   "show(small_sum.sort_values('grp'), name='joined')",
    # refusals: through the session's connection
    "read_passwd": "con.sql(\"SELECT * FROM read_csv('/etc/passwd')\").fetchall()",
    "read_text": "con.sql(\"SELECT * FROM read_text('/etc/passwd')\").fetchall()",
    "glob_root": "con.sql(\"SELECT * FROM glob('/*')\").fetchall()",
    "copy_to": "con.execute(\"COPY big TO '/session/out.csv'\")",
    "export_db": "con.execute(\"EXPORT DATABASE '/session/exported'\")",
    "attach_new": "con.execute(\"ATTACH '/session/new.duckdb' AS n2\")",
    "install": "con.execute('INSTALL httpfs')",
    "load": "con.execute('LOAD httpfs')",
    "insert": "con.execute(\"INSERT INTO aa_0.main.data VALUES ('zz', 1.0)\")",
    "update": "con.execute('UPDATE aa_0.main.data SET value = 0')",
    "delete": "con.execute('DELETE FROM aa_0.main.data')",
    "create_in_db": "con.execute('CREATE TABLE aa_0.main.t2 AS SELECT 1 AS x')",
    "drop_table": "con.execute('DROP TABLE aa_0.main.data')",
    "insert_view": "con.execute(\"INSERT INTO big VALUES ('zz', 1.0)\")",
    "unlock": "con.execute('SET enable_external_access = true')",
    "more_memory": "con.execute(\"SET memory_limit = '100GB'\")",
    # refusals: around the connection (the wall)
    "own_connection_shadow": "import duckdb\nduckdb.connect().sql(\"SELECT * FROM read_csv('/etc/shadow')\").fetchall()",
    "own_connection_write": "import duckdb\ncon.close()\nw = duckdb.connect('/duckdb/" + FILE + "')\n"
                            "w.execute('DELETE FROM data')",
    "open_write": "open('/duckdb/" + FILE + "', 'r+b').write(b'x')",
    "remove_file": "import os\nos.remove('/duckdb/" + FILE + "')",
    "chmod_file": "import os\nos.chmod('/duckdb/" + FILE + "', 0o666)",
    "new_file": "open('/duckdb/planted.duckdb', 'wb').write(b'x')",
    "host_path": "print(open(" + "{host!r}" + ", 'rb').read(4))",
    "after": "print(len(big), int(con.sql('SELECT count(*) FROM big').fetchall()[0][0]))",
}


def main(base: Path) -> None:
    session = base / "sess"
    (session / "duck").mkdir(parents=True)
    db = session / "duck" / FILE
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE data AS SELECT 'g' || (i % 7) AS grp, (i * 7919 % 10007) / 100.0 AS value "
                f"FROM range({ROWS}) t(i)")
    expected = con.sql("SELECT grp, avg(value) AS m, count(*) AS n FROM data GROUP BY grp ORDER BY grp").df()
    con.close()
    db.chmod(0o400)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    small = session / "small.parquet"
    pd.DataFrame({"grp": ["g1", "g2"], "label": ["one", "two"]}).to_parquet(small)
    settings = Settings.load({"home": base / "home", "run_timeout": 60, "run_cpu_seconds": 60, "run_memory_mb": 1024,
                              "max_table_rows": 20})
    results = {}
    with Sandbox(settings, session / "work", session / "figures") as sb:
        sb.load_tables({"big": db, "small": small}, "big")
        for name, code in PROGRAMS.items():
            r = sb.run(code.replace("{host!r}", repr(str(db))))
            results[name] = {"ok": r.ok, "kind": r.error.kind if r.error else None,
                             "message": r.error.message if r.error else "", "stdout": r.stdout,
                             "tables": [{"name": t.name, "columns": t.columns, "rows": t.rows, "n_rows": t.n_rows}
                                        for t in r.tables]}
        variables = sb.variables()
        walled = Zygote.get().walled
    st = db.stat()
    print("REPORT " + json.dumps({
        "uid": os.geteuid(), "walled": walled, "rows": ROWS, "results": results, "variables": variables,
        "expected": {"grp": expected["grp"].tolist(), "m": expected["m"].tolist(), "n": expected["n"].tolist()},
        "unchanged": hashlib.sha256(db.read_bytes()).hexdigest() == digest, "mode": oct(st.st_mode & 0o777),
        "duck_files": sorted(p.name for p in db.parent.iterdir()),
        "work_files": sorted(p.name for p in (session / "work").iterdir()),
    }, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
