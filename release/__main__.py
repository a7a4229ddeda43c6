from release.cli import run

run()
