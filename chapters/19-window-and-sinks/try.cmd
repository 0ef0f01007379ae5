build/bin/ch19-window-and-sinks --window 1 --cache 32 --sinks 1,8
