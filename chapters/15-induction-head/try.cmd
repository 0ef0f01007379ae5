ch15-induction-head --steps 20 --copy-steps 20 --heads 2 --seed 7
