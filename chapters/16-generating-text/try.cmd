ch16-generating-text --prompt "The LORD is my shepherd" --length 60 --temperature 0.5 --top-k 10 --seed 7
