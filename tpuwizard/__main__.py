from tpuwizard.start import run

run()
