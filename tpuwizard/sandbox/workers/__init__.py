"""What a sandbox VM's workers find: Google's TPU image (image.py), its tools (tools.py, run as a
file, with python.py and envs.py beside it), and their processes, ended with the VM."""
