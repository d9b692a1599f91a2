echo rename
