from hooklint.entry import script

if __name__ == "__main__":
    script()
