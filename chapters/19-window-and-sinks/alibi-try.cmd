build/bin/ch19-alibi --alibi-heads 6
